import PackageCore

/// Signatures, fixed sizes and field values of the ZIP format (PKWARE APPNOTE 6.3.10).
enum ZipFormat {
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let centralHeaderSignature: UInt32 = 0x0201_4B50
    static let endSignature: UInt32 = 0x0605_4B50
    static let zip64EndSignature: UInt32 = 0x0606_4B50
    static let zip64LocatorSignature: UInt32 = 0x0706_4B50
    static let dataDescriptorSignature: UInt32 = 0x0807_4B50

    static let localHeaderSize = 30
    static let centralHeaderSize = 46
    static let endRecordSize = 22
    static let zip64EndRecordSize = 56
    static let zip64LocatorSize = 20
    /// The end record is the last 22 bytes plus a comment of at most 65,535.
    static let maximumEndSearch = endRecordSize + 0xFFFF
    /// Zero bytes accepted after the end record (and its comment): below one 10 KiB block,
    /// what bsdtar pads a ZIP written to a pipe with.
    static let maximumZeroPadding = 10_240

    /// The all-ones value that says "the real value is in the ZIP64 extra field".
    static let marker32: UInt32 = 0xFFFF_FFFF
    static let marker16: UInt16 = 0xFFFF

    // General-purpose flags.
    static let flagEncrypted: UInt16 = 1 << 0
    static let flagDataDescriptor: UInt16 = 1 << 3
    static let flagStrongEncryption: UInt16 = 1 << 6
    static let flagUTF8: UInt16 = 1 << 11
    static let flagMaskedHeaders: UInt16 = 1 << 13

    // Extra field IDs.
    static let zip64ExtraID: UInt16 = 0x0001
    static let extendedTimestampID: UInt16 = 0x5455
    static let unicodePathID: UInt16 = 0x7075
    static let unicodeCommentID: UInt16 = 0x6375
    /// Fields that may appear at most once in a header.
    static let singleExtraIDs: Set<UInt16> = [0x0001, 0x5455, 0x7075, 0x6375, 0x6870, 0x6470]
    /// Fields that must appear in both headers of an entry or in neither.
    static let pairedExtraIDs: Set<UInt16> = [0x5455, 0x7075, 0x6870]
    /// pkgtool's content hash: "ph" in the file (Specs/zip.md, "The content-hash extra field").
    static let contentHashID: UInt16 = 0x6870
    static let contentHashVersion: UInt8 = 1
    static let contentHashAlgorithmXXH3_128: UInt8 = 1
    /// pkgtool's dead ranges: "pd" in the file, central directory only, first record only
    /// (Specs/zip.md, "Appending in place").
    static let deadRangesID: UInt16 = 0x6470
    static let deadRangesVersion: UInt8 = 1

    /// Version made by: upper byte 3 (Unix), lower byte 30 (spec 3.0).
    static let versionMadeByUnix: UInt16 = 3 << 8 | 30
    static let versionNeededDefault: UInt16 = 20
    static let versionNeededZip64: UInt16 = 45
}

/// The compression methods we name; only `stored` and `deflated` are read and written.
public enum ZipMethod: Sendable, Equatable, CustomStringConvertible {
    /// Method 0: the bytes as they are.
    case stored
    /// Method 8: raw deflate.
    case deflated
    /// Any other method number (bzip2 is 12, LZMA 14…), named only to refuse it.
    case other(UInt16)

    init(rawValue: UInt16) {
        switch rawValue {
        case 0: self = .stored
        case 8: self = .deflated
        default: self = .other(rawValue)
        }
    }

    /// The method number of the ZIP headers.
    public var rawValue: UInt16 {
        switch self {
        case .stored: return 0
        case .deflated: return 8
        case .other(let value): return value
        }
    }

    /// "stored", "deflated", or the method's name and number ("bzip2 (method 12)").
    public var description: String {
        switch self {
        case .stored: return "stored"
        case .deflated: return "deflated"
        case .other(let value): return Self.name(of: value)
        }
    }

    /// The method's name as APPNOTE lists it, with its number.
    static func name(of value: UInt16) -> String {
        let names: [UInt16: String] = [
            1: "shrink", 2: "reduce (factor 1)", 3: "reduce (factor 2)", 4: "reduce (factor 3)",
            5: "reduce (factor 4)", 6: "implode", 9: "deflate64", 10: "PKWARE DCL implode", 12: "bzip2",
            14: "LZMA", 16: "IBM z/OS CMPSC", 18: "IBM TERSE", 19: "IBM LZ77", 20: "zstd (old number)",
            93: "zstd", 94: "MP3", 95: "xz", 96: "JPEG variant", 97: "WavPack", 98: "PPMd", 99: "AES encryption",
        ]
        return "\(names[value] ?? "unknown method") (method \(value))"
    }
}

// MARK: Little-endian fields

extension UnsafeRawBufferPointer {
    /// Fields at an offset the caller has bounds-checked.
    @inline(__always) func le16(_ offset: Int) -> UInt16 { UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
    @inline(__always) func le32(_ offset: Int) -> UInt32 { UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)) }
    @inline(__always) func le64(_ offset: Int) -> UInt64 { UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
}

/// Appends little-endian fields to a byte array.
struct RecordBuilder {
    var bytes: [UInt8] = []

    init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }
    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
    mutating func append<S: Sequence>(_ other: S) where S.Element == UInt8 { bytes.append(contentsOf: other) }
}

extension Array where Element == UInt8 {
    /// Overwrites a little-endian UInt32 at `offset`.
    mutating func storeLE32(_ value: UInt32, at offset: Int) {
        for index in 0..<4 { self[offset + index] = UInt8(truncatingIfNeeded: value >> UInt32(8 * index)) }
    }
    mutating func storeLE64(_ value: UInt64, at offset: Int) {
        for index in 0..<8 { self[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
    }
}

// MARK: Extra fields

/// One record of an extra field: a 2-byte ID, a 2-byte length, the data.
struct ExtraRecord {
    var id: UInt16
    /// Offset of the data within the extra field, and its length.
    var dataOffset: Int
    var length: Int
}

enum ExtraField {
    /// Splits an extra field into records. Nil when a record runs past the end.
    static func records(_ extra: UnsafeRawBufferPointer) -> [ExtraRecord]? {
        var result: [ExtraRecord] = []
        var offset = 0
        while offset < extra.count {
            // Fewer than 4 bytes after the last record: alignment padding (zipalign and some
            // Java tools write it, of zeros or 0xFF); not a record, ignored.
            if extra.count - offset < 4 { return result }
            let id = extra.le16(offset)
            let length = Int(extra.le16(offset + 2))
            guard offset + 4 + length <= extra.count else { return nil }
            result.append(ExtraRecord(id: id, dataOffset: offset + 4, length: length))
            offset += 4 + length
        }
        return result
    }
}

// MARK: Times

/// MS-DOS date and time (local time in the format; we write and read them as UTC, as
/// Info-ZIP does on a machine in UTC) and Unix seconds.
enum DOSTime {
    /// The earliest representable moment, 1980-01-01 00:00:00.
    static let minimum: Int64 = 315_532_800
    /// The latest, 2107-12-31 23:59:58.
    static let maximum: Int64 = 4_354_819_198

    /// (time, date) for Unix seconds, clamped to the representable range, 2-second steps.
    static func encode(_ seconds: Int64) -> (time: UInt16, date: UInt16) {
        let clamped = min(max(seconds, minimum), maximum)
        let days = clamped / 86_400
        let secondsOfDay = clamped % 86_400
        let (year, month, day) = civilFromDays(days)
        let time = UInt16(secondsOfDay / 3600) << 11 | UInt16(secondsOfDay / 60 % 60) << 5 | UInt16(secondsOfDay % 60 / 2)
        let date = UInt16(year - 1980) << 9 | UInt16(month) << 5 | UInt16(day)
        return (time, date)
    }

    /// Unix seconds for a DOS (time, date); out-of-range fields are clamped, not refused.
    static func decode(time: UInt16, date: UInt16) -> Int64 {
        let year = Int64(date >> 9) + 1980
        let month = Int64(min(max((date >> 5) & 0xF, 1), 12))
        let day = Int64(min(max(date & 0x1F, 1), 31))
        let hours = Int64(min(time >> 11, 23))
        let minutes = Int64(min((time >> 5) & 0x3F, 59))
        let seconds = Int64(min((time & 0x1F) * 2, 59))
        return daysFromCivil(year, month, day) * 86_400 + hours * 3600 + minutes * 60 + seconds
    }

    /// Howard Hinnant's days-from-civil algorithm (proleptic Gregorian, days since 1970-01-01).
    static func daysFromCivil(_ y: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let year = m <= 2 ? y - 1 : y
        let era = (year >= 0 ? year : year - 399) / 400
        let yearOfEra = year - era * 400
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
