import FoundationEssentials
import PackageCore

/// The remote's one mutable object, `PREFIX/HEAD`: the latest version's summary and those of
/// its most recent ancestors, so that `log` and a no-change push need this one request.
///
/// JSON, readable with any S3 tool:
/// ```
/// {"format": "pkgtool-remote", "format_version": 1,
///  "head": {"id": "<sha256>", "sequence": 3, "time_ns": …, "parent": "<sha256>" (absent for the first),
///           "second_parent": "<sha256>" (a merge's only), "root": "<xxh3-128>", "size": …, "entries": …},
///  "history": [ {…the parent…}, {…its parent…}, … ]}        (newest first, at most 100)
/// ```
/// It moves only by a conditional PUT (`If-Match` on the ETag read, or `If-None-Match: *`
/// for the first version): of two pushes from the same head, one wins and the other is
/// told the remote moved on.
struct HeadRecord: Sendable, Equatable {
    static let formatName = "pkgtool-remote"
    /// The newest format this pkgtool reads. A record is written in format 1 unless a prune
    /// gave it `pruned`, `index` or `deleting` (then 2: older readers refuse it).
    static let formatVersion = 2
    /// Ancestors kept in the record; `log` reads older ones from their manifests.
    static let historyLimit = 100

    var head: VersionSummary
    var history: [VersionSummary]
    /// The numbers of the versions a prune dropped: ascending, disjoint, inclusive ranges
    /// below the head's number (Specs/remote.md, "Prune").
    var pruned: [ClosedRange<Int>] = []
    /// The blob index a prune wrote: where blobs it moved out of repacked packs are now.
    var index: SHA256Digest? = nil
    /// The packs the last prune deletes: no version may name one.
    var deleting: [SHA256Digest] = []
    /// How many prunes committed: a push that finds more than one since it read `HEAD`
    /// cannot know every pack they deleted.
    var prunes = 0

    /// The record after `version` is pushed on top of this one (what a prune recorded stays).
    func advanced(to version: VersionSummary) -> HeadRecord {
        HeadRecord(
            head: version, history: Array(([head] + history).prefix(Self.historyLimit)), pruned: pruned, index: index,
            deleting: deleting, prunes: prunes)
    }

    /// Whether version number `sequence` was dropped by a prune.
    func isPruned(_ sequence: Int) -> Bool { pruned.contains { $0.contains(sequence) } }

    /// The JSON form of a version summary (the field names of the spec).
    struct SummaryJSON: Codable {
        var id: String
        var sequence: Int
        var time_ns: Int64
        var parent: String?
        /// A merge's second parent; absent otherwise (older readers ignore it).
        var second_parent: String?
        var root: String
        var size: Int64
        var entries: Int
    }

    struct RecordJSON: Codable {
        var format: String
        var format_version: Int?
        var head: SummaryJSON?
        var history: [SummaryJSON]?
        var pruned: [[Int]]?
        var index: String?
        var deleting: [String]?
        var prunes: Int?
    }

    func encoded() -> [UInt8] {
        let pruneFree = pruned.isEmpty && index == nil && deleting.isEmpty && prunes == 0
        let record = RecordJSON(
            format: Self.formatName, format_version: pruneFree ? 1 : 2, head: Self.json(head),
            history: history.map(Self.json), pruned: pruned.isEmpty ? nil : pruned.map { [$0.lowerBound, $0.upperBound] },
            index: index?.description, deleting: deleting.isEmpty ? nil : deleting.map(\.description),
            prunes: prunes == 0 ? nil : prunes)
        // Compact, keys in byte order: the bytes JSONEncoder's `.sortedKeys` wrote before
        // pkgtool had one JSON writer (PruneFormatTests pins them). Plain strings and
        // integers cannot fail to encode.
        let json = (try? JSON(encoding: record)) ?? .null
        return Array(json.serialized().utf8) + [UInt8(ascii: "\n")]
    }

    /// Parses a head record; nil when the object is not one (another program's data).
    /// - Throws: when it claims to be one but is damaged or of a newer format.
    static func decode(_ bytes: [UInt8], location: RemoteLocation) throws(RemoteError) -> HeadRecord? {
        struct Probe: Codable { var format: String? }
        guard let probe = try? JSONDecoder().decode(Probe.self, from: Data(bytes)), probe.format == formatName else {
            return nil
        }
        func damaged(_ why: String) -> RemoteError {
            RemoteError(.verificationFailed, "the HEAD of \(location) is damaged: \(why)")
        }
        guard let object = try? JSONDecoder().decode(RecordJSON.self, from: Data(bytes)) else {
            throw damaged("it is not the JSON pkgtool writes")
        }
        guard let version = object.format_version else { throw damaged("no format_version") }
        guard version <= formatVersion else {
            throw RemoteError(
                .notARemote,
                "\(location) was written by a newer pkgtool (remote format \(version); this one reads \(formatVersion))")
        }
        var record = try versions(of: object, damaged: damaged)
        try readPruneState(of: object, into: &record, damaged: damaged)
        guard version >= 2 || (record.pruned.isEmpty && record.index == nil && record.deleting.isEmpty && record.prunes == 0)
        else {
            throw damaged("format 1 cannot say what was pruned")
        }
        return record
    }

    /// The head and its history, which must be the head's chain of ancestors, newest first.
    private static func versions(of object: RecordJSON, damaged: (String) -> RemoteError) throws(RemoteError)
        -> HeadRecord
    {
        guard let headObject = object.head, let head = summary(headObject) else {
            throw damaged("its head version is malformed")
        }
        var history: [VersionSummary] = []
        for item in object.history ?? [] {
            guard let summary = summary(item) else { throw damaged("a history entry is malformed") }
            history.append(summary)
        }
        // The history must be the head's chain of ancestors, newest first.
        var expected = head
        for item in history {
            guard expected.parent == item.id, item.sequence == expected.sequence - 1 else {
                throw damaged("its history does not follow the parent links")
            }
            expected = item
        }
        return HeadRecord(head: head, history: history)
    }

    /// What a prune recorded: ranges ascending and disjoint below the head, ids well formed.
    private static func readPruneState(
        of object: RecordJSON, into record: inout HeadRecord, damaged: (String) -> RemoteError
    ) throws(RemoteError) {
        var below = 0
        for range in object.pruned ?? [] {
            guard range.count == 2, range[0] > below, range[0] <= range[1], range[1] < record.head.sequence else {
                throw damaged("its pruned versions are out of order")
            }
            record.pruned.append(range[0]...range[1])
            below = range[1] + 1
        }
        if let text = object.index {
            guard let digest = SHA256Digest(hex: text) else { throw damaged("its index is not an id") }
            record.index = digest
        }
        for text in object.deleting ?? [] {
            guard let digest = SHA256Digest(hex: text) else { throw damaged("a pack it deletes is not an id") }
            record.deleting.append(digest)
        }
        if let prunes = object.prunes {
            guard prunes >= 1 else { throw damaged("its prune count is out of range") }
            record.prunes = prunes
        }
    }

    static func json(_ summary: VersionSummary) -> SummaryJSON {
        SummaryJSON(
            id: summary.id.description, sequence: summary.sequence, time_ns: summary.time,
            parent: summary.parent?.description, second_parent: summary.secondParent?.description,
            root: summary.rootHash.description, size: summary.size, entries: summary.entryCount)
    }

    static func summary(_ object: SummaryJSON) -> VersionSummary? {
        guard let id = SHA256Digest(hex: object.id), object.sequence >= 1, let root = ContentHash(hex: object.root),
            object.size >= 0, object.entries >= 0
        else { return nil }
        var parent: SHA256Digest?
        if let text = object.parent {
            guard let digest = SHA256Digest(hex: text) else { return nil }
            parent = digest
        }
        guard (parent == nil) == (object.sequence == 1) else { return nil }
        var secondParent: SHA256Digest?
        if let text = object.second_parent {
            // Only a merge has one: a version with a first parent, and another.
            guard let digest = SHA256Digest(hex: text), let parent, digest != parent else { return nil }
            secondParent = digest
        }
        return VersionSummary(
            id: id, sequence: object.sequence, time: object.time_ns, parent: parent, secondParent: secondParent,
            rootHash: root, size: object.size, entryCount: object.entries)
    }
}
