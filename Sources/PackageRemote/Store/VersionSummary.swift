import PackageCore

/// What `pkgtool log` shows of one version: its id, number, time, parent, root hash, size.
public struct VersionSummary: Sendable, Hashable {
    /// The SHA-256 of the version's manifest object: its name on the remote.
    public var id: SHA256Digest
    /// 1 for a remote's first version, then one more than the parent's.
    public var sequence: Int
    /// When it was pushed, nanoseconds since the epoch (the pushing machine's clock).
    public var time: Int64
    /// The version this one was pushed on top of; nil for a remote's first version. The
    /// remote's history (numbers, `log`, the rollback checks) follows this parent alone.
    public var parent: SHA256Digest?
    /// For a merge pushed by `sync`, the version the package's merged changes were based
    /// on (its sync base before the merge); nil for every other version.
    public var secondParent: SHA256Digest?
    /// The package's Merkle root hash (Specs/hashing.md).
    public var rootHash: ContentHash
    /// Bytes of all regular files.
    public var size: Int64
    /// Entries: files, directories and symbolic links.
    public var entryCount: Int

    /// A summary with every field given; a push makes them, `PackageRemote.log` reads them.
    /// - Parameters:
    ///   - id: the SHA-256 of the version's manifest.
    ///   - sequence: its number (1 for the first).
    ///   - time: when it was pushed, nanoseconds since the epoch.
    ///   - parent: the version it was pushed on top of (nil for the first).
    ///   - secondParent: for a merge, the version the merged changes were based on.
    ///   - rootHash: the package's Merkle root hash.
    ///   - size: bytes of all regular files.
    ///   - entryCount: files, directories and symbolic links.
    public init(
        id: SHA256Digest, sequence: Int, time: Int64, parent: SHA256Digest?, secondParent: SHA256Digest? = nil,
        rootHash: ContentHash, size: Int64, entryCount: Int
    ) {
        self.id = id
        self.sequence = sequence
        self.time = time
        self.parent = parent
        self.secondParent = secondParent
        self.rootHash = rootHash
        self.size = size
        self.entryCount = entryCount
    }

    /// The first 12 hexadecimal digits of the id, as `log` prints it.
    public var shortID: String { String(id.description.prefix(12)) }

    /// The time as ISO 8601 in UTC, to the millisecond: "2026-12-02T03:50:50.123Z".
    public var isoTime: String { Self.isoTime(time) }

    static func isoTime(_ nanoseconds: Int64) -> String {
        var seconds = Int(nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000).quotient)
        let milliseconds = Int(nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000).remainder / 1_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1, 2))-\(pad(parts.tm_mday, 2))T"
            + "\(pad(parts.tm_hour, 2)):\(pad(parts.tm_min, 2)):\(pad(parts.tm_sec, 2)).\(pad(Int32(milliseconds), 3))Z"
    }
}

import Glibc
