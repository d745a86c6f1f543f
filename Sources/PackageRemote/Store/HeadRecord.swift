import Foundation
import PackageCore

/// The remote's one mutable object, `PREFIX/HEAD`: the latest version's summary and those of
/// its most recent ancestors, so that `log` and a no-change push need this one request.
///
/// JSON, readable with any S3 tool:
/// ```
/// {"format": "pkgtool-remote", "format_version": 1,
///  "head": {"id": "<sha256>", "sequence": 3, "time_ns": …, "parent": "<sha256>" | null,
///           "root": "<xxh3-128>", "size": …, "entries": …},
///  "history": [ {…the parent…}, {…its parent…}, … ]}        (newest first, at most 100)
/// ```
/// It moves only by a conditional PUT (`If-Match` on the ETag read, or `If-None-Match: *`
/// for the first version): of two pushes from the same head, one wins and the other is
/// told the remote moved on.
struct HeadRecord: Sendable, Equatable {
    static let formatName = "pkgtool-remote"
    static let formatVersion = 1
    /// Ancestors kept in the record; `log` reads older ones from their manifests.
    static let historyLimit = 100

    var head: VersionSummary
    var history: [VersionSummary]

    /// The record after `version` is pushed on top of this one.
    func advanced(to version: VersionSummary) -> HeadRecord {
        HeadRecord(head: version, history: Array(([head] + history).prefix(Self.historyLimit)))
    }

    func encoded() -> [UInt8] {
        let object: [String: Any] = [
            "format": Self.formatName, "format_version": Self.formatVersion,
            "head": Self.json(head), "history": history.map(Self.json),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Array(data) + [UInt8(ascii: "\n")]
    }

    /// Parses a head record; nil when the object is not one (another program's data).
    /// - Throws: when it claims to be one but is damaged or of a newer format.
    static func decode(_ bytes: [UInt8], location: RemoteLocation) throws(RemoteError) -> HeadRecord? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            object["format"] as? String == formatName
        else { return nil }
        func damaged(_ why: String) -> RemoteError {
            RemoteError(.verificationFailed, "the HEAD of \(location) is damaged: \(why)")
        }
        guard let version = object["format_version"] as? Int else { throw damaged("no format_version") }
        guard version <= formatVersion else {
            throw RemoteError(
                .notARemote,
                "\(location) was written by a newer pkgtool (remote format \(version); this one reads \(formatVersion))")
        }
        guard let headObject = object["head"] as? [String: Any], let head = summary(headObject) else {
            throw damaged("its head version is malformed")
        }
        let historyObjects = object["history"] as? [[String: Any]] ?? []
        var history: [VersionSummary] = []
        for item in historyObjects {
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

    static func json(_ summary: VersionSummary) -> [String: Any] {
        [
            "id": summary.id.description, "sequence": summary.sequence, "time_ns": summary.time,
            "parent": summary.parent.map { $0.description as Any } ?? NSNull(), "root": summary.rootHash.description,
            "size": summary.size, "entries": summary.entryCount,
        ]
    }

    static func summary(_ object: [String: Any]) -> VersionSummary? {
        guard let idText = object["id"] as? String, let id = SHA256Digest(hex: idText),
            let sequence = object["sequence"] as? Int, sequence >= 1,
            let time = (object["time_ns"] as? NSNumber)?.int64Value,
            let rootText = object["root"] as? String, let root = ContentHash(hex: rootText),
            let size = (object["size"] as? NSNumber)?.int64Value, size >= 0,
            let entries = object["entries"] as? Int, entries >= 0
        else { return nil }
        var parent: SHA256Digest?
        if let parentText = object["parent"] as? String {
            guard let digest = SHA256Digest(hex: parentText) else { return nil }
            parent = digest
        }
        guard (parent == nil) == (sequence == 1) else { return nil }
        return VersionSummary(
            id: id, sequence: sequence, time: time, parent: parent, rootHash: root, size: size, entryCount: entries)
    }
}
