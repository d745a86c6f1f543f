import PackageCore

/// A pack: blobs laid end to end, then a trailer that indexes them (restic's idea), so that
/// a pack can be understood without any manifest (a future `fsck` or garbage collection).
///
/// ```
/// blob bytes…
/// trailer: per blob { SHA-256 (32), length u32 }, blob count u32, format u32 = 1,
///          magic "PKGRPACK" (8)
/// ```
/// Offsets follow from the lengths. The pack's name is the SHA-256 of all its bytes, which
/// is also the payload hash its PUT is signed with: the server refuses a damaged upload.
enum PackFormat {
    static let magic: [UInt8] = Array("PKGRPACK".utf8)
    static let formatVersion: UInt32 = 1
    static let trailerFixedSize = 16
    static let trailerRecordSize = 36

    /// The trailer for blobs of these digests and lengths, in pack order.
    static func trailer(_ blobs: [(digest: SHA256Digest, length: UInt32)]) -> [UInt8] {
        var writer = ByteWriter(capacity: blobs.count * trailerRecordSize + trailerFixedSize)
        for blob in blobs {
            writer.append(contentsOf: blob.digest.bytes)
            writer.append(blob.length)
        }
        writer.append(UInt32(blobs.count))
        writer.append(formatVersion)
        writer.append(contentsOf: magic)
        return writer.bytes
    }

    /// Parses a whole pack's trailer: each blob's digest, offset and length.
    static func index(of pack: UnsafeRawBufferPointer) -> [(digest: SHA256Digest, offset: Int, length: Int)]? {
        guard pack.count >= trailerFixedSize, Array(pack[(pack.count - 8)...]) == magic else { return nil }
        var reader = ByteReader(pack, offset: pack.count - trailerFixedSize)
        guard let count = try? reader.read(UInt32.self), let format = try? reader.read(UInt32.self),
            format == formatVersion, Int(count) <= (pack.count - trailerFixedSize) / trailerRecordSize
        else { return nil }
        let trailerStart = pack.count - trailerFixedSize - Int(count) * trailerRecordSize
        reader = ByteReader(pack, offset: trailerStart)
        var offset = 0
        var result: [(digest: SHA256Digest, offset: Int, length: Int)] = []
        for _ in 0..<count {
            guard let digest = try? reader.bytes(32), let length = try? reader.read(UInt32.self) else { return nil }
            result.append((SHA256Digest(bytes: digest), offset, Int(length)))
            offset += Int(length)
        }
        return offset == trailerStart ? result : nil
    }
}
