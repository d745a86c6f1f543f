import PackageCore

// Extra-field records that both the parsers and the writer use, each reading and writing
// its own bytes.

/// The extended timestamp (0x5455): a flags byte, then the modification time when bit 0 is
/// set, as 32-bit Unix seconds. We write and read only the modification time.
struct ExtendedTimestampField {
    /// Unix seconds; nil when the field does not carry the modification time.
    var modificationSeconds: Int64?

    init(modificationSeconds: Int64) { self.modificationSeconds = modificationSeconds }

    /// Reads the field's data; a flag without the 4 bytes it promises means no time.
    init(parsing data: UnsafeRawBufferPointer) {
        modificationSeconds = data.count >= 5 && data[0] & 1 != 0 ? Int64(data.le32(1)) : nil
    }

    /// Appends the whole record (ID, length, data); times before 1970 or after 2106 clamp.
    func append(to builder: inout RecordBuilder) {
        builder.u16(ZipFormat.extendedTimestampID)
        builder.u16(5)
        builder.u8(1)  // modification time present
        builder.u32(UInt32(clamping: max(0, modificationSeconds ?? 0)))
    }
}

/// pkgtool's content hash (0x6870): version, algorithm (XXH3-128), the 16 canonical bytes.
struct ContentHashField {
    static let dataLength = 18
    var hash: ContentHash?

    init(hash: ContentHash?) { self.hash = hash }

    /// Reads the field's data; nil unless it is exactly our version and algorithm.
    init?(parsing data: UnsafeRawBufferPointer) {
        guard data.count == Self.dataLength, data[0] == ZipFormat.contentHashVersion,
            data[1] == ZipFormat.contentHashAlgorithmXXH3_128
        else { return nil }
        hash = ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: data[2..<Self.dataLength]))
    }

    /// Appends the whole record, zeros when the hash is not known yet; returns the offset
    /// of the 16 hash bytes in `builder` (to patch them in later).
    @discardableResult
    func append(to builder: inout RecordBuilder) -> Int {
        builder.u16(ZipFormat.contentHashID)
        builder.u16(UInt16(Self.dataLength))
        builder.u8(ZipFormat.contentHashVersion)
        builder.u8(ZipFormat.contentHashAlgorithmXXH3_128)
        let offset = builder.bytes.count
        builder.append(hash?.canonicalBytes ?? [UInt8](repeating: 0, count: 16))
        return offset
    }
}
