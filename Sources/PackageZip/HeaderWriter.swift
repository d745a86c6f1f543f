import PackageCore

/// What the writer knows about one entry when it writes its headers.
struct EntryHeader {
    var name: String
    var kind: FileKind
    var permissions: UInt32
    /// Unix seconds.
    var modificationTime: Int64
    var method: ZipMethod
    var crc32: UInt32 = 0
    var compressedSize: Int64 = 0
    var uncompressedSize: Int64
    var contentHash: ContentHash?
    var localHeaderOffset: Int64 = 0
    /// Whether the local header carries a ZIP64 field (decided before the data is written,
    /// from the size the data can reach).
    var localZip64: Bool
    /// No extra fields in the local header (the `--first` entry: EPUB and ODF readers
    /// expect the mimetype's bytes at offset 38).
    var bareLocalHeader = false

    var nameBytes: [UInt8] { Array(name.utf8) }
    var isASCII: Bool { name.utf8.allSatisfy { $0 < 0x80 } }
}

/// Serialises local headers, central records and end records exactly as Specs/zip.md says.
enum HeaderWriter {
    /// Where the patchable fields of a local header sit, relative to its start.
    struct LocalLayout {
        var length: Int
        /// Offset of the CRC-32 (then compressed and uncompressed sizes, 4 bytes each).
        var crcOffset = 14
        /// Offset of the ZIP64 field's two sizes, when present.
        var zip64SizesOffset: Int?
        /// Offset of the 16 hash bytes, when present.
        var hashOffset: Int?
    }

    static func flags(_ header: EntryHeader) -> UInt16 { header.isASCII ? 0 : ZipFormat.flagUTF8 }

    static func timestampExtra(_ seconds: Int64, into builder: inout RecordBuilder) {
        ExtendedTimestampField(modificationSeconds: seconds).append(to: &builder)
    }

    static func hashExtra(_ hash: ContentHash?, into builder: inout RecordBuilder) -> Int {
        ContentHashField(hash: hash).append(to: &builder)
    }

    /// Whether an entry carries our hash field (files and links).
    static func carriesHash(_ header: EntryHeader) -> Bool { header.kind != .directory }

    /// The local header, with CRC, sizes and hash as known now (patched later when not).
    static func local(_ header: EntryHeader) -> (bytes: [UInt8], layout: LocalLayout) {
        let name = header.nameBytes
        let (time, date) = DOSTime.encode(header.modificationTime)
        var builder = RecordBuilder(capacity: 30 + name.count + 64)
        builder.u32(ZipFormat.localHeaderSignature)
        builder.u16(header.localZip64 ? ZipFormat.versionNeededZip64 : ZipFormat.versionNeededDefault)
        builder.u16(flags(header))
        builder.u16(header.method.rawValue)
        builder.u16(time)
        builder.u16(date)
        builder.u32(header.crc32)
        builder.u32(header.localZip64 ? ZipFormat.marker32 : UInt32(header.compressedSize))
        builder.u32(header.localZip64 ? ZipFormat.marker32 : UInt32(header.uncompressedSize))
        builder.u16(UInt16(name.count))
        builder.u16(0)  // extra length, set below
        builder.append(name)
        let extraStart = builder.bytes.count
        var layout = LocalLayout(length: 0)
        if header.localZip64 {
            builder.u16(ZipFormat.zip64ExtraID)
            builder.u16(16)
            layout.zip64SizesOffset = builder.bytes.count
            builder.u64(UInt64(header.uncompressedSize))
            builder.u64(UInt64(header.compressedSize))
        }
        if !header.bareLocalHeader {
            timestampExtra(header.modificationTime, into: &builder)
            if carriesHash(header) { layout.hashOffset = hashExtra(header.contentHash, into: &builder) }
        }
        let extraLength = builder.bytes.count - extraStart
        builder.bytes[28] = UInt8(truncatingIfNeeded: extraLength)
        builder.bytes[29] = UInt8(truncatingIfNeeded: extraLength >> 8)
        layout.length = builder.bytes.count
        return (builder.bytes, layout)
    }

    /// Writes the final CRC, sizes and hash into a local header built by `local`.
    static func patch(_ bytes: inout [UInt8], at base: Int, layout: LocalLayout, header: EntryHeader) {
        bytes.storeLE32(header.crc32, at: base + layout.crcOffset)
        if let zip64 = layout.zip64SizesOffset {
            bytes.storeLE64(UInt64(header.uncompressedSize), at: base + zip64)
            bytes.storeLE64(UInt64(header.compressedSize), at: base + zip64 + 8)
        } else {
            bytes.storeLE32(UInt32(header.compressedSize), at: base + layout.crcOffset + 4)
            bytes.storeLE32(UInt32(header.uncompressedSize), at: base + layout.crcOffset + 8)
        }
        if let hashOffset = layout.hashOffset, let hash = header.contentHash {
            let canonical = hash.canonicalBytes
            for index in 0..<16 { bytes[base + hashOffset + index] = canonical[index] }
        }
    }

    /// The central-directory record; `extra` goes after its own fields (the dead ranges
    /// of an in-place append, in the first record).
    static func central(_ header: EntryHeader, extra tail: [UInt8] = [], into builder: inout RecordBuilder) {
        let name = header.nameBytes
        let (time, date) = DOSTime.encode(header.modificationTime)
        let bigUncompressed = header.uncompressedSize >= Int64(ZipFormat.marker32)
        let bigCompressed = header.compressedSize >= Int64(ZipFormat.marker32)
        let bigOffset = header.localHeaderOffset >= Int64(ZipFormat.marker32)
        let zip64 = bigUncompressed || bigCompressed || bigOffset
        var extra = RecordBuilder(capacity: 64)
        if zip64 {
            extra.u16(ZipFormat.zip64ExtraID)
            extra.u16(UInt16(8 * ((bigUncompressed ? 1 : 0) + (bigCompressed ? 1 : 0) + (bigOffset ? 1 : 0))))
            if bigUncompressed { extra.u64(UInt64(header.uncompressedSize)) }
            if bigCompressed { extra.u64(UInt64(header.compressedSize)) }
            if bigOffset { extra.u64(UInt64(header.localHeaderOffset)) }
        }
        if !header.bareLocalHeader {
            timestampExtra(header.modificationTime, into: &extra)
            if carriesHash(header) { _ = hashExtra(header.contentHash, into: &extra) }
        }
        extra.append(tail)

        let typeBits: UInt32
        switch header.kind {
        case .directory: typeBits = 0o040000
        case .symbolicLink: typeBits = 0o120000
        default: typeBits = 0o100000
        }
        let mode = typeBits | (header.kind == .symbolicLink ? 0o777 : header.permissions & 0o7777)
        builder.u32(ZipFormat.centralHeaderSignature)
        builder.u16(ZipFormat.versionMadeByUnix)
        builder.u16(zip64 || header.localZip64 ? ZipFormat.versionNeededZip64 : ZipFormat.versionNeededDefault)
        builder.u16(flags(header))
        builder.u16(header.method.rawValue)
        builder.u16(time)
        builder.u16(date)
        builder.u32(header.crc32)
        builder.u32(bigCompressed ? ZipFormat.marker32 : UInt32(header.compressedSize))
        builder.u32(bigUncompressed ? ZipFormat.marker32 : UInt32(header.uncompressedSize))
        builder.u16(UInt16(name.count))
        builder.u16(UInt16(extra.bytes.count))
        builder.u16(0)  // comment
        builder.u16(0)  // disk
        builder.u16(0)  // internal attributes
        builder.u32(mode << 16 | (header.kind == .directory ? 0x10 : 0))
        builder.u32(bigOffset ? ZipFormat.marker32 : UInt32(header.localHeaderOffset))
        builder.append(name)
        builder.append(extra.bytes)
    }

    /// The end records: ZIP64 end record and locator only when a count, size or offset needs them.
    static func end(entryCount: Int, centralOffset: Int64, centralSize: Int64) -> [UInt8] {
        var builder = RecordBuilder(capacity: 128)
        let zip64 =
            entryCount >= 0xFFFF || centralOffset >= Int64(ZipFormat.marker32) || centralSize >= Int64(ZipFormat.marker32)
        if zip64 {
            let recordOffset = centralOffset + centralSize
            builder.u32(ZipFormat.zip64EndSignature)
            builder.u64(UInt64(ZipFormat.zip64EndRecordSize - 12))
            builder.u16(ZipFormat.versionMadeByUnix)
            builder.u16(ZipFormat.versionNeededZip64)
            builder.u32(0)
            builder.u32(0)
            builder.u64(UInt64(entryCount))
            builder.u64(UInt64(entryCount))
            builder.u64(UInt64(centralSize))
            builder.u64(UInt64(centralOffset))
            builder.u32(ZipFormat.zip64LocatorSignature)
            builder.u32(0)
            builder.u64(UInt64(recordOffset))
            builder.u32(1)
        }
        builder.u32(ZipFormat.endSignature)
        builder.u16(0)
        builder.u16(0)
        let count: UInt16 = entryCount >= 0xFFFF ? 0xFFFF : UInt16(entryCount)
        builder.u16(count)
        builder.u16(count)
        builder.u32(centralSize >= Int64(ZipFormat.marker32) ? ZipFormat.marker32 : UInt32(centralSize))
        builder.u32(centralOffset >= Int64(ZipFormat.marker32) ? ZipFormat.marker32 : UInt32(centralOffset))
        builder.u16(0)  // comment length
        return builder.bytes
    }
}
