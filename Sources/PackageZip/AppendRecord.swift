import Glibc
import PackageCore

/// The recovery record of an in-place append: `.NAME.<hash>.pkgtool-append` beside the
/// archive (Specs/zip.md, "Appending in place").
///
/// An append never writes below the archive's old length, so cutting the file back to it
/// restores the old archive whole. The record says which file (device, inode) and which
/// length, with a hash of the old end (so that a file that is not the one recorded is
/// never cut), and, once the new central directory and end record are known and before
/// they are written, the new length and a hash of those last bytes: a file that ends with
/// exactly them is the complete new archive. Binary, 116 bytes, ending in its own CRC-32;
/// it is replaced whole (written beside and renamed), never edited.
struct AppendRecord: Equatable {
    static let magic: [UInt8] = Array("PKGTAPD1".utf8)
    static let encodedSize = 116
    /// How many bytes below the old length the old end's hash covers (the end record and
    /// the end of the central directory).
    static let oldTailSpan: Int64 = 4096

    var device: UInt64
    var inode: UInt64
    var oldLength: Int64
    /// XXH3-128 of the `oldTailSpan` bytes below `oldLength` (fewer in a smaller file).
    var oldTailHash: ContentHash
    /// Zero until the appended entries are in place and the new tail is about to be written.
    var newLength: Int64 = 0
    /// The new central directory and end records: their length and XXH3-128.
    var tailLength: Int64 = 0
    var tailHash = ContentHash.empty

    /// The record's path for the archive at `archive`.
    static func path(for archive: String) -> String {
        let (directory, name) = split(archive)
        let recordName = SiblingNames(forName: name).stem + "append"
        return directory.map { $0 + recordName } ?? recordName
    }

    /// (The directory part with its final slash, or nil for a bare name; the name.) Split
    /// on the byte "/" (a "/" followed by a combining mark is one Character).
    static func split(_ path: String) -> (String?, String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return (nil, path) }
        let after = path.utf8.index(after: slash)
        return (String(path[..<after]), String(path[after...]))
    }

    var encoded: [UInt8] {
        var builder = RecordBuilder(capacity: Self.encodedSize)
        builder.append(Self.magic)
        builder.u64(device)
        builder.u64(inode)
        builder.u64(UInt64(oldLength))
        builder.u64(0)  // reserved
        builder.append(oldTailHash.canonicalBytes)
        builder.u64(UInt64(newLength))
        builder.u64(UInt64(tailLength))
        builder.append(tailHash.canonicalBytes)
        builder.append([UInt8](repeating: 0, count: 24))  // reserved
        builder.u32(CRC32.of(builder.bytes))
        return builder.bytes
    }

    /// The record in `bytes`, or nil when they are not one (wrong size, magic or CRC).
    init?(decoding bytes: [UInt8]) {
        guard bytes.count == Self.encodedSize, Array(bytes[0..<8]) == Self.magic else { return nil }
        let ok: Bool = bytes.withUnsafeBytes { raw in
            raw.le32(Self.encodedSize - 4) == CRC32.of(Array(bytes[..<(Self.encodedSize - 4)]))
        }
        guard ok else { return nil }
        let fields: (UInt64, UInt64, UInt64, UInt64, UInt64) = bytes.withUnsafeBytes { raw in
            (raw.le64(8), raw.le64(16), raw.le64(24), raw.le64(56), raw.le64(64))
        }
        guard fields.2 <= UInt64(Int64.max), fields.3 <= UInt64(Int64.max), fields.4 <= fields.3 else { return nil }
        device = fields.0
        inode = fields.1
        oldLength = Int64(fields.2)
        newLength = Int64(fields.3)
        tailLength = Int64(fields.4)
        oldTailHash = bytes.withUnsafeBytes { ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: $0[40..<56])) }
        tailHash = bytes.withUnsafeBytes { ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: $0[72..<88])) }
    }

    init(device: UInt64, inode: UInt64, oldLength: Int64, oldTailHash: ContentHash) {
        self.device = device
        self.inode = inode
        self.oldLength = oldLength
        self.oldTailHash = oldTailHash
    }

    /// What the record says about the file it was found beside.
    enum Verdict: Equatable {
        /// The append completed: the file ends with the recorded new tail.
        case complete
        /// The append did not complete: the old archive is the first `oldLength` bytes.
        case incomplete
        /// The record describes another file (the name was replaced since), or one whose
        /// old end is no longer there: it says nothing about this one.
        case stale
    }

    /// Judges `file` (whose status is `status`) against the record.
    func verdict(for file: borrowing FileDescriptor, status: FileStatus) throws -> Verdict {
        guard status.device == device, status.inode == inode else { return .stale }
        if newLength > 0, status.size == newLength,
            try Self.hash(file, newLength - tailLength..<newLength) == tailHash
        {
            return .complete
        }
        if oldLength <= status.size, try Self.hash(file, Self.oldTail(below: oldLength)) == oldTailHash {
            return .incomplete
        }
        return .stale
    }

    /// The range the old end's hash covers.
    static func oldTail(below length: Int64) -> Range<Int64> { max(0, length - oldTailSpan)..<length }

    /// XXH3-128 of `range` of `file`, read in 1 MiB pieces; nil when the file ends first.
    static func hash(_ file: borrowing FileDescriptor, _ range: Range<Int64>) throws(FileSystemError) -> ContentHash? {
        let hasher = ContentHasher()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var position = range.lowerBound
        while position < range.upperBound {
            let want = Int(min(Int64(buffer.count), range.upperBound - position))
            let got = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]), at: position)
            guard got == want else { return nil }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[..<got]))
            position += Int64(got)
        }
        return hasher.digest()
    }

    /// Reads the record at `path`: nil when there is none, or it is not a record.
    static func read(at path: String) -> AppendRecord? {
        guard let file = try? FileDescriptor.open(path, options: [.noFollow, .nonBlocking]),
            let status = try? file.status(), status.kind == .regular, status.size == Int64(encodedSize)
        else { return nil }
        var bytes = [UInt8](repeating: 0, count: encodedSize)
        let got = (try? bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }) ?? 0
        guard got == encodedSize else { return nil }
        return AppendRecord(decoding: bytes)
    }
}
