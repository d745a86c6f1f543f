import PackageCore

// The fixed parts of the central and local headers as structs, and the one walk over an
// extra field that both parsing paths use.

/// The fields of one central directory header (46 fixed bytes, then name, extra, comment).
///
/// Sizes, offset and disk are the 32/16-bit values as stored; the ZIP64 field, when the
/// parser reads it, replaces the ones marked 0xFFFF_FFFF / 0xFFFF.
struct CentralHeader {
    var versionMadeBy: UInt16
    var flags: UInt16
    var method: UInt16
    var dosTime: UInt16
    var dosDate: UInt16
    var crc32: UInt32
    var compressedSize: UInt64
    var uncompressedSize: UInt64
    var disk: UInt32
    var externalAttributes: UInt32
    var localHeaderOffset: UInt64
    /// Views into the record the header was parsed from (valid only while it is).
    var name: UnsafeRawBufferPointer
    var extra: UnsafeRawBufferPointer
    var comment: UnsafeRawBufferPointer

    /// Reads the header from `record`, which holds exactly one whole record; nil when the
    /// record is shorter than its fixed part plus the name and extra lengths it declares.
    init?(parsing record: UnsafeRawBufferPointer) {
        guard record.count >= ZipFormat.centralHeaderSize else { return nil }
        let nameLength = Int(record.le16(28))
        let extraLength = Int(record.le16(30))
        let nameEnd = ZipFormat.centralHeaderSize + nameLength
        guard nameEnd + extraLength <= record.count else { return nil }
        versionMadeBy = record.le16(4)
        flags = record.le16(8)
        method = record.le16(10)
        dosTime = record.le16(12)
        dosDate = record.le16(14)
        crc32 = record.le32(16)
        compressedSize = UInt64(record.le32(20))
        uncompressedSize = UInt64(record.le32(24))
        disk = UInt32(record.le16(34))
        externalAttributes = record.le32(38)
        localHeaderOffset = UInt64(record.le32(42))
        name = UnsafeRawBufferPointer(rebasing: record[ZipFormat.centralHeaderSize..<nameEnd])
        extra = UnsafeRawBufferPointer(rebasing: record[nameEnd..<(nameEnd + extraLength)])
        comment = UnsafeRawBufferPointer(rebasing: record[(nameEnd + extraLength)...])
    }

    /// The host system in the upper byte of "version made by" (3 Unix, 19 macOS, 0 MS-DOS).
    var host: UInt16 { versionMadeBy >> 8 }
}

/// The fixed 30 bytes of a local file header.
struct LocalHeader {
    var flags: UInt16
    var method: UInt16
    var dosTime: UInt16
    var dosDate: UInt16
    var crc32: UInt32
    var compressedSize: UInt64
    var uncompressedSize: UInt64
    var nameLength: Int
    var extraLength: Int

    /// Reads the fixed part from `fixed`; nil when fewer than its 30 bytes arrived.
    init?(parsing fixed: UnsafeRawBufferPointer) {
        guard fixed.count >= ZipFormat.localHeaderSize else { return nil }
        flags = fixed.le16(6)
        method = fixed.le16(8)
        dosTime = fixed.le16(10)
        dosDate = fixed.le16(12)
        crc32 = fixed.le32(14)
        compressedSize = UInt64(fixed.le32(18))
        uncompressedSize = UInt64(fixed.le32(22))
        nameLength = Int(fixed.le16(26))
        extraLength = Int(fixed.le16(28))
    }
}

/// What the central parser takes from a central header's extra field.
struct CentralExtras {
    var modificationSeconds: Int64?
    var contentHash: ContentHash?
    /// The name from a valid Unicode path field (0x7075), which replaces the stored one.
    var unicodeName: String?
    /// IDs of the records that may occur only once.
    var seen: Set<UInt16> = []
}

/// What the local check takes from a local header's extra field.
struct LocalExtras {
    var modificationSeconds: Int64?
    var contentHash: ContentHash?
    var unicodeName: String?
    var hasZip64 = false
    var seen: Set<UInt16> = []
}

extension ArchiveParser {
    /// Walks the records of an extra field (`place` is "central" or "local", for messages),
    /// refusing one that runs past the field's end or a second record of an ID that may
    /// occur once; returns the IDs of those seen.
    func walkExtraField(
        _ extra: UnsafeRawBufferPointer, place: String, entry: String,
        _ body: (UInt16, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Set<UInt16> {
        guard let records = ExtraField.records(extra) else {
            throw fail(.malformed, entry, "the \(place) extra field is malformed (a record runs past its end)")
        }
        var seen = Set<UInt16>()
        for item in records {
            let data = UnsafeRawBufferPointer(rebasing: extra[item.dataOffset..<(item.dataOffset + item.length)])
            if ZipFormat.singleExtraIDs.contains(item.id) {
                guard seen.insert(item.id).inserted else {
                    throw fail(.malformed, entry, "the \(place) extra field holds record 0x\(hex16(item.id)) twice")
                }
            }
            try body(item.id, data)
        }
        return seen
    }
}
