import Glibc
import PackageCore

/// What this machine remembers about a remote, so that pushes and pulls cost in
/// proportion to the change (Specs/remote.md, "Local state"):
///
/// - `manifests/<id>`: version manifests already fetched or pushed (checked against their
///   SHA-256 when read, so a damaged cache is only a cache miss);
/// - `pending`: packs a push uploaded that no version names yet (an interrupted push): the
///   next push reuses their blobs instead of sending them again;
/// - `packages/<sha256 of the package's real path>`: the version each local package was
///   last pushed as or pulled from, as versions before packages carried their own sync
///   record (`SyncState`). Read only, for a package that has no record of its own; never
///   written any more.
///
/// It lives in `$PKGTOOL_CACHE_DIR`, else `$XDG_CACHE_HOME/pkgtool`, else
/// `$HOME/.cache/pkgtool`, under `remotes/<sha256 of endpoint, bucket and prefix>`. Losing it
/// costs re-downloads: never correctness.
struct LocalCache: Sendable {
    let directory: String

    init(root: String, endpoint: String, location: RemoteLocation) {
        let key = SHA256Digest.of(Array("\(endpoint)\n\(location.bucket)\n\(location.prefix)".utf8))
        directory = root + "/remotes/" + String(key.description.prefix(32))
    }

    /// The cache root from the environment (see the type's documentation).
    static func defaultRoot(_ environment: [String: String]) -> String {
        if let given = environment["PKGTOOL_CACHE_DIR"], !given.isEmpty { return given }
        if let xdg = environment["XDG_CACHE_HOME"], xdg.utf8.first == UInt8(ascii: "/") { return xdg + "/pkgtool" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return home + "/.cache/pkgtool"
    }

    // MARK: Manifests

    func manifest(_ id: SHA256Digest) -> [UInt8]? {
        guard let bytes = try? readFile(directory + "/manifests/" + id.description, limit: 1 << 30),
            SHA256Digest.of(bytes) == id
        else { return nil }
        return bytes
    }

    /// Where the cached copy of object `id` is, nil when there is none (what it holds is
    /// checked by whoever reads it).
    func manifestPath(_ id: SHA256Digest) -> String? {
        let path = directory + "/manifests/" + id.description
        guard let status = try? FileSystem.statusIfExists(path), status.kind == .regular else { return nil }
        return path
    }

    func storeManifest(_ id: SHA256Digest, _ bytes: [UInt8]) {
        try? FileSystem.makeDirectories(directory + "/manifests", permissions: 0o700)
        try? AtomicFile.write(bytes, to: directory + "/manifests/" + id.description, durability: .none)
    }

    // MARK: Pending packs

    /// A pack uploaded by a push that no version names yet.
    struct PendingPack: Sendable {
        var id: SHA256Digest
        var blobs: [(digest: SHA256Digest, offset: UInt32, length: UInt32)]
    }

    /// Appends one record: written with one `write` on an `O_APPEND` descriptor, so that
    /// two pushes appending at once interleave whole records (`ChecksummedLog`).
    func appendPending(_ pack: PendingPack) throws {
        try FileSystem.makeDirectories(directory, permissions: 0o700)
        let file = try FileDescriptor.open(
            directory + "/pending", access: .writeOnly, options: [.create, .append], permissions: 0o600)
        try ChecksummedLog.append(Self.encoded(pack), to: file)
    }

    /// The pending packs recorded; a torn, damaged or foreign record (a file of an earlier
    /// format) ends the list.
    func pendingPacks() -> [PendingPack] {
        readPending().packs
    }

    /// The pending packs, and whether they are all the file holds.
    private func readPending() -> (packs: [PendingPack], whole: Bool) {
        guard let file = try? FileDescriptor.open(directory + "/pending") else { return ([], true) }
        var packs: [PendingPack] = []
        let read = try? ChecksummedLog.readRecords(
            of: file, magic: Self.pendingMagic, highestVersion: Self.pendingVersion, limit: 1 << 28
        ) { version, payload in
            guard version == Self.pendingVersion, let pack = Self.decodePending(payload) else { return false }
            packs.append(pack)
            return true
        }
        return (packs, read.map { $0.accepted == $0.size } ?? false)
    }

    /// Forgets the pending packs a version now names, and whatever follows a torn or
    /// foreign record (so that the records appended next are read).
    func dropPending(named: Set<SHA256Digest>) {
        let path = directory + "/pending"
        let (all, whole) = readPending()
        let keep = all.filter { !named.contains($0.id) }
        guard keep.count < all.count || !whole else { return }
        // Rewritten whole: a record another push appends meanwhile may be lost, which only
        // costs that push's packs being sent again.
        if keep.isEmpty {
            try? FileSystem.remove(path)
        } else {
            try? AtomicFile.write(keep.flatMap(Self.encoded), to: path, permissions: 0o600, durability: .none)
        }
    }

    /// The pending file's records (Specs/save.md, "Records that survive a crash").
    static let pendingMagic: [UInt8] = Array("PKGPEND".utf8) + [0]
    static let pendingVersion: UInt32 = 1

    /// One `ChecksummedLog` record whose payload is the pack id (32), the blob count u32,
    /// then per blob its digest (32), offset u32 and length u32.
    static func encoded(_ pack: PendingPack) -> [UInt8] {
        var payload = ByteWriter(capacity: 36 + pack.blobs.count * 40)
        payload.append(contentsOf: pack.id.bytes)
        payload.append(UInt32(pack.blobs.count))
        for blob in pack.blobs {
            payload.append(contentsOf: blob.digest.bytes)
            payload.append(blob.offset)
            payload.append(blob.length)
        }
        return ChecksummedLog.record(magic: pendingMagic, version: pendingVersion, payload: payload.bytes)
    }

    /// A record's pack; nil unless the payload is exactly one.
    private static func decodePending(_ payload: UnsafeRawBufferPointer) -> PendingPack? {
        var reader = ByteReader(payload)
        guard let id = try? reader.bytes(32), let count = try? reader.read(UInt32.self), Int(count) * 40 == reader.remaining
        else { return nil }
        var blobs: [(digest: SHA256Digest, offset: UInt32, length: UInt32)] = []
        blobs.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let digest = try? reader.bytes(32), let offset = try? reader.read(UInt32.self),
                let length = try? reader.read(UInt32.self)
            else { return nil }
            blobs.append((SHA256Digest(bytes: digest), offset, length))
        }
        return PendingPack(id: SHA256Digest(bytes: id), blobs: blobs)
    }

    // MARK: Sync records

    /// The version a local package was last pushed as or pulled from (the old, per-machine
    /// record: see the type's documentation).
    struct SyncRecord: Sendable, Equatable {
        var version: SHA256Digest
        var rootHash: ContentHash
    }

    func syncRecord(forPackage realPath: String) -> SyncRecord? {
        guard let bytes = try? readFile(recordPath(realPath), limit: 1 << 16) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let fields = text.split(separator: "\n").first?.split(separator: " ") ?? []
        guard fields.count >= 2, let version = SHA256Digest(hex: fields[0]), let root = ContentHash(hex: fields[1]) else {
            return nil
        }
        return SyncRecord(version: version, rootHash: root)
    }

    func recordPath(_ realPath: String) -> String {
        directory + "/packages/" + String(SHA256Digest.of(Array(realPath.utf8)).description.prefix(32))
    }
}

/// Reads a whole small file (at most `limit` bytes).
func readFile(_ path: String, limit: Int) throws -> [UInt8] {
    let file = try FileDescriptor.open(path)
    let size = Int(try file.status().size)
    guard size <= limit else { throw FileSystemError(.read, path: path, reason: "larger than \(limit) bytes") }
    var bytes = [UInt8](repeating: 0, count: size)
    let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0) }
    return Array(bytes[..<count])
}
