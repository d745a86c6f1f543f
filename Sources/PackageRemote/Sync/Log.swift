/// `log`: the chain of versions from the head, newest first.
enum LogOperation {
    static func run(store: RemoteStore, limit: Int) throws -> [VersionSummary] {
        let connection = store.connection()
        let head = try store.requireHead(connection)
        var versions = Array(([head.record.head] + head.record.history).prefix(limit))
        // Past the head record's history, each older version's header says its parent.
        while versions.count < limit, let last = versions.last, let parent = last.parent {
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
        var matches: [VersionSummary] = []
        var current: VersionSummary? = head.head
        var history = head.history[...]
        while let version = current {
            if let number, version.sequence == number { return version }
            if isPrefix && version.id.description.hasPrefix(lowered) { matches.append(version) }
            if let number, version.sequence < number { break }
            guard let parent = version.parent else { break }
            if let next = history.first, next.id == parent {
                current = next
                history = history.dropFirst()
            } else {
                current = try store.summary(parent, connection)
            }
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
}
