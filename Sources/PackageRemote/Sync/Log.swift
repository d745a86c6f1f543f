/// A remote's history as `log` shows it: versions newest first, and what a prune dropped.
public struct RemoteHistory: Sendable {
    /// The versions, newest first (pruned ones included while the head record holds them).
    public var versions: [VersionSummary]
    /// The numbers of the versions prunes dropped, as ascending inclusive ranges.
    public var pruned: [ClosedRange<Int>]

    /// Whether version number `sequence` was pruned.
    /// - Parameter sequence: a version's number.
    public func isPruned(_ sequence: Int) -> Bool { pruned.contains { $0.contains(sequence) } }
}

/// `log`: the chain of versions from the head, newest first.
enum LogOperation {
    /// How many versions past the head record's history `pull --version` (and `diff`) walk
    /// back, one ranged GET each, to find a number or an id prefix; a full id needs none.
    static let walkLimit = 1000

    /// The versions from the head, newest first: at most `limit`, or, when nil, those the
    /// head record holds (one GET, whatever sequence number the head claims).
    static func run(store: RemoteStore, limit: Int?) throws -> [VersionSummary] {
        try history(store: store, limit: limit).versions
    }

    /// The versions from the head, newest first, and the numbers the record says were pruned.
    static func history(store: RemoteStore, limit: Int?) throws -> RemoteHistory {
        let connection = store.connection()
        let head = try store.requireHead(connection)
        return RemoteHistory(versions: try walk(store: store, connection: connection, head: head, limit: limit), pruned: head.record.pruned)
    }

    private static func walk(
        store: RemoteStore, connection: S3Connection, head: (record: HeadRecord, etag: String), limit: Int?
    ) throws -> [VersionSummary] {
        let inRecord = [head.record.head] + head.record.history
        guard let limit else { return inRecord }
        var versions = Array(inRecord.prefix(max(1, limit)))
        // Past the head record's history, each older version's header says its parent.
        // A walk stops at the first pruned version: its manifest, which names its parent, is gone.
        while versions.count < limit, let last = versions.last, let parent = last.parent,
            !head.record.isPruned(last.sequence - 1)
        {
            let summary = try store.summary(parent, connection)
            guard summary.sequence == last.sequence - 1 else {
                throw RemoteError(
                    .verificationFailed,
                    "version \(summary.shortID) of \(store.location) does not follow version \(last.shortID): the history is damaged")
            }
            versions.append(summary)
        }
        return versions
    }

    /// Finds a version by full id, unique id prefix (at least 4 hexadecimal digits) or
    /// sequence number, walking back from the head.
    static func resolve(_ reference: String, store: RemoteStore, connection: S3Connection, head: HeadRecord)
        throws -> VersionSummary
    {
        let found = try find(reference, store: store, connection: connection, head: head)
        guard !head.isPruned(found.sequence) else {
            throw RemoteError(.unknownVersion, "version \(found.sequence) (\(found.shortID)) of \(store.location) was pruned")
        }
        return found
    }

    private static func find(_ reference: String, store: RemoteStore, connection: S3Connection, head: HeadRecord)
        throws -> VersionSummary
    {
        let lowered = reference.lowercased()
        if let full = SHA256Digest(hex: lowered) {
            if let known = ([head.head] + head.history).first(where: { $0.id == full }) { return known }
            return try store.summary(full, connection)
        }
        let number = Int(reference)
        let isPrefix = lowered.count >= 4 && lowered.allSatisfy(\.isHexDigit)
        guard number != nil || isPrefix else {
            throw RemoteError(
                .unknownVersion, "'\(reference)' is not a version: give its id (or a prefix of it) or its number")
        }
        // A head record claiming a million versions must not cost a million requests: past
        // its history, at most `walkLimit` older versions are read.
        let oldestInRecord = head.history.last ?? head.head
        if let number, !isPrefix, number >= 1, number < oldestInRecord.sequence - walkLimit {
            throw RemoteError(
                .unknownVersion,
                "version \(number) of \(store.location) is more than \(walkLimit) versions older than the head "
                    + "record's history (its oldest is version \(oldestInRecord.sequence)): give its full id "
                    + "('pkgtool log --limit N --json' lists ids, one request per version past the record)")
        }
        var matches: [VersionSummary] = []
        var current: VersionSummary? = head.head
        var history = head.history[...]
        var fetched = 0
        while let version = current {
            if let number, version.sequence == number { return version }
            if isPrefix && version.id.description.hasPrefix(lowered) { matches.append(version) }
            // Digits alone may be a number or an id prefix ("85641910"): the walk stops early
            // for a number only when the reference cannot be a prefix.
            if let number, !isPrefix, version.sequence < number { break }
            guard let parent = version.parent else { break }
            if head.isPruned(version.sequence - 1) && !history.contains(where: { $0.id == parent }) {
                // The chain is gone past here: a number in a pruned range was pruned.
                if let number, head.isPruned(number), matches.isEmpty {
                    throw RemoteError(.unknownVersion, "version \(number) of \(store.location) was pruned")
                }
                break
            }
            current = try previous(
                version, parent: parent, history: &history, fetched: &fetched, reference: reference, store: store,
                connection: connection, head: head)
        }
        guard matches.count == 1 else {
            throw RemoteError(
                .unknownVersion,
                matches.isEmpty
                    ? "\(store.location) has no version '\(reference)' ('pkgtool log \(store.location)' lists them)"
                    : "'\(reference)' names \(matches.count) versions of \(store.location): give more digits")
        }
        return matches[0]
    }

    /// The version before `version` (whose parent is `parent`): the next of the head
    /// record's `history` when it is that one, else read from the store — at most
    /// `walkLimit` reads for one lookup, each checked to follow `version`.
    private static func previous(
        _ version: VersionSummary, parent: SHA256Digest, history: inout ArraySlice<VersionSummary>, fetched: inout Int,
        reference: String, store: RemoteStore, connection: S3Connection, head: HeadRecord
    ) throws -> VersionSummary? {
        if let next = history.first, next.id == parent {
            history = history.dropFirst()
            return next
        }
        guard fetched < walkLimit else {
            throw RemoteError(
                .unknownVersion,
                "'\(reference)' was looked for among the latest \(head.history.count + 1 + walkLimit) versions "
                    + "of \(store.location) only (each older one costs a request): give its full id")
        }
        fetched += 1
        return try store.parentSummary(of: version, connection)
    }
}
