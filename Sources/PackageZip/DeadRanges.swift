import PackageCore

/// The bytes an in-place append left behind: old versions of replaced entries, removed
/// entries, earlier central directories and end records (Specs/zip.md, "Appending in
/// place").
///
/// They are declared in the first central record by a field of their own (ID `0x6470`,
/// "pd": version 1, then each range as offset and length, 64-bit little-endian, in file
/// order, neither touching nor overlapping). The reader accepts the gaps between entries
/// only when they are exactly the declared ranges: every other gap is still refused.
enum DeadRanges {
    /// The most ranges one field holds: a central record's extra field is at most 65,535
    /// bytes, and the first record's own fields (ZIP64, timestamp, hash) take under 100.
    static let maximumCount = 4000

    /// The gaps between `live` ranges (any order) below `end`: the complement, merged.
    static func complement(of live: [Range<Int64>], below end: Int64) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var position: Int64 = 0
        for range in live.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if range.lowerBound > position { gaps.append(position..<range.lowerBound) }
            position = max(position, range.upperBound)
        }
        if end > position { gaps.append(position..<end) }
        return gaps
    }

    /// The extra record (ID, length, data) declaring `ranges`.
    static func field(_ ranges: [Range<Int64>]) -> [UInt8] {
        var builder = RecordBuilder(capacity: 5 + 16 * ranges.count)
        builder.u16(ZipFormat.deadRangesID)
        builder.u16(UInt16(1 + 16 * ranges.count))
        builder.u8(ZipFormat.deadRangesVersion)
        for range in ranges {
            builder.u64(UInt64(range.lowerBound))
            builder.u64(UInt64(range.count))
        }
        return builder.bytes
    }

    /// The ranges a field's data declares, or nil when it is malformed: another version, a
    /// length that is not whole ranges, an empty range, or ranges out of order, touching or
    /// overlapping.
    static func parse(_ data: UnsafeRawBufferPointer) -> [Range<Int64>]? {
        guard data.count >= 1, data[0] == ZipFormat.deadRangesVersion, (data.count - 1) % 16 == 0 else { return nil }
        var ranges: [Range<Int64>] = []
        var cursor = 1
        while cursor < data.count {
            let start = data.le64(cursor)
            let length = data.le64(cursor + 8)
            cursor += 16
            guard length > 0, start <= UInt64(Int64.max), length <= UInt64(Int64.max) - start else { return nil }
            let range = Int64(start)..<Int64(start + length)
            if let last = ranges.last, range.lowerBound <= last.upperBound { return nil }
            ranges.append(range)
        }
        return ranges
    }
}
