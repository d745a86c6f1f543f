import PackageCore

/// Where a prune moved blobs: `PREFIX/index/<sha256>` (Specs/remote.md, "The blob index").
///
/// ```
/// magic "PKGRIDX\0" (8), format u32 = 1, count u32
/// count × { blob SHA-256 (32), pack (32), offset u32, length u32 }, strictly by blob SHA-256
/// ```
/// A kept version's manifest cannot be rewritten (its id is its SHA-256, and its successor
/// names it), so its blobs move and this says where: whoever reads a manifest after a record
/// naming an index takes a listed blob from the index's place.
struct BlobIndex: Sendable, Equatable {
    static let magic: [UInt8] = Array("PKGRIDX".utf8) + [0]
    static let formatVersion: UInt32 = 1
    static let headerSize = 16
    static let recordSize = 72
    /// The largest index read (about 900,000 moved blobs).
    static let limit = 64 << 20

    /// Each moved blob's place, by its SHA-256.
    var locations: [SHA256Digest: BlobLocation] = [:]

    var isEmpty: Bool { locations.isEmpty }

    /// `blob` at its place now: the index's, or where the manifest says.
    func place(_ blob: BlobLocation) -> BlobLocation { locations[blob.digest] ?? blob }

    func encoded() -> [UInt8] {
        let sorted = locations.values.sorted { $0.digest.bytes.lexicographicallyPrecedes($1.digest.bytes) }
        var writer = ByteWriter(capacity: Self.headerSize + sorted.count * Self.recordSize)
        writer.append(contentsOf: Self.magic)
        writer.append(Self.formatVersion)
        writer.append(UInt32(sorted.count))
        for location in sorted {
            writer.append(contentsOf: location.digest.bytes)
            writer.append(contentsOf: location.pack.bytes)
            writer.append(location.offset)
            writer.append(location.length)
        }
        return writer.bytes
    }

    /// Parses an index whose bytes were checked against its name; every bound is checked.
    static func decode(_ bytes: [UInt8], id: SHA256Digest) throws(RemoteError) -> BlobIndex {
        let damaged = RemoteError(.verificationFailed, "blob index \(id.description.prefix(12)) is damaged")
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic else { throw damaged }
        do {
            return try bytes.withUnsafeBytes { raw throws -> BlobIndex in
                var reader = ByteReader(raw, offset: 8)
                let format = try reader.read(UInt32.self)
                guard format == formatVersion else {
                    throw RemoteError(.notARemote, "blob index \(id.description.prefix(12)) has format \(format), unknown to this pkgtool")
                }
                let count = Int(try reader.read(UInt32.self))
                guard count == (bytes.count - headerSize) / recordSize, (bytes.count - headerSize) % recordSize == 0 else {
                    throw damaged
                }
                var index = BlobIndex()
                index.locations.reserveCapacity(count)
                var previous: [UInt8]? = nil
                var names: [SHA256Digest: PackName] = [:]  // one shared name a pack
                for _ in 0..<count {
                    let digest = Array(try reader.bytes(32))
                    let pack = SHA256Digest(bytes: try reader.bytes(32))
                    let offset = try reader.read(UInt32.self)
                    let length = try reader.read(UInt32.self)
                    guard previous.map({ $0.lexicographicallyPrecedes(digest) }) ?? true else { throw damaged }
                    previous = digest
                    let blob = digest.withUnsafeBytes { SHA256Digest(bytes: $0) }
                    let name = names[pack] ?? PackName(pack)
                    names[pack] = name
                    index.locations[blob] = BlobLocation(digest: blob, packName: name, offset: offset, length: length)
                }
                return index
            }
        } catch let error as RemoteError {
            throw error
        } catch {
            throw damaged
        }
    }
}
