import CZlib

/// CRC-32 (ISO-HDLC, the ZIP and gzip checksum), computed by zlib.
package enum CRC32 {
    /// The CRC of `bytes`, continuing from `crc` (0 to start).
    @inline(__always)
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
    }

    /// The CRC of the concatenation of A and B, from CRC(A), CRC(B) and B's length.
    package static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), Int(secondLength)))
    }

    /// The CRC of all of `bytes`.
    package static func of(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { update(0, $0) } }
}
