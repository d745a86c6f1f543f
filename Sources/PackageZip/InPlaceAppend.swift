import Glibc
import PackageCore

/// Where an in-place append puts things (`PackPipeline.run(…appending:…)`).
struct AppendLayout {
    /// The old archive's length: entries not kept are written from here on.
    let start: Int64
    /// For each entry, its header when it stays where the old archive has it (its local
    /// header offset is the old one), nil when it is written anew.
    let kept: [EntryHeader?]
    /// The dead-range field (`DeadRanges`) of the first central record.
    let deadField: [UInt8]
    /// The bytes that field declares dead.
    let deadBytes: Int64
}

/// The new central directory and end records of an append, and where they go.
struct ArchiveTail {
    let offset: Int64
    let bytes: [UInt8]
}

/// The default repack of an existing archive: the changed entries appended after its end,
/// then a new central directory, in the same file (Specs/zip.md, "Appending in place").
///
/// Nothing below the old length is ever written, so cutting the file back to it gives the
/// old archive whole: the recovery record (`AppendRecord`) says when to, and every later
/// open does it (`AppendRecovery`). Old versions of changed entries and old central
/// directories stay in the file as dead ranges, which the new central directory declares;
/// when they would pass half the archive the pack rewrites it instead (which compacts).
enum InPlaceAppend {
    /// At most this share of the old archive may be dead after the append (then it is at
    /// most this share of the new one too, which is longer).
    static let maximumDeadShare = 0.5

    /// The layout of an append of `entries` to `base`, or nil when the archive is better
    /// rewritten: too much would be dead, too many dead ranges, or the `--first` entry
    /// would leave offset 0.
    static func plan(_ entries: [PackEntry], base: ZipArchive) throws -> AppendLayout? {
        guard !entries.isEmpty else { return nil }
        var kept = [EntryHeader?](repeating: nil, count: entries.count)
        var live: [Range<Int64>] = []
        live.reserveCapacity(entries.count)
        let window = HeaderReader(file: base.file)
        for (index, entry) in entries.enumerated() {
            guard let old = base.entry(at: entry.path), old.kind == entry.kind, !old.hasDataDescriptor,
                let header = try keptHeader(entry, old: old, reader: window)
            else { continue }
            kept[index] = header
            live.append(old.localHeaderOffset..<old.endOffset)
        }
        if entries[0].isFirst, kept[0]?.localHeaderOffset != 0 { return nil }
        let dead = DeadRanges.complement(of: live, below: base.fileSize)
        let deadBytes = dead.reduce(Int64(0)) { $0 + Int64($1.count) }
        guard dead.count <= DeadRanges.maximumCount, Double(deadBytes) <= maximumDeadShare * Double(base.fileSize)
        else { return nil }
        return AppendLayout(start: base.fileSize, kept: kept, deadField: DeadRanges.field(dead), deadBytes: deadBytes)
    }

    /// The header `entry` would be written with, when the base's local header (and a
    /// link's target) is byte for byte that: then the old entry serves as it is.
    private static func keptHeader(_ entry: PackEntry, old: ZipEntry, reader: HeaderReader) throws -> EntryHeader? {
        var header = PackPipeline.header(for: entry)
        switch entry.kind {
        case .directory:
            guard old.compressedSize == 0 else { return nil }
        case .symbolicLink:
            PackPipeline.fillLink(&header, entry)
            guard let target = old.linkTarget, let wanted = entry.linkTarget, PathOrder.sameBytes(target, wanted) else {
                return nil
            }
        default:
            guard entry.reuseIndex >= 0, Int(entry.reuseIndex) == old.index else { return nil }
            PackPipeline.fillReused(&header, from: old)
        }
        let local = HeaderWriter.local(header).bytes
        guard Int64(local.count) == old.dataOffset - old.localHeaderOffset,
            try reader.bytes(at: old.localHeaderOffset, count: local.count) == local
        else { return nil }
        header.localHeaderOffset = old.localHeaderOffset
        return header
    }

    /// Appends to `output` (the file `base` was opened from) in place. Returns false, having
    /// written nothing, when the file is not the one `base` read (replaced or grown since),
    /// has another name (a hard link: appending would change it too), is not writable, or
    /// has a record of another append beside it: the caller rewrites the archive instead.
    static func append(
        to output: String, base: ZipArchive, layout: AppendLayout, durability: Durability,
        _ body: (borrowing FileDescriptor) throws -> ArchiveTail
    ) throws -> Bool {
        guard let file = try? FileDescriptor.open(output, access: .readWrite, options: [.noFollow, .nonBlocking]) else {
            return false
        }
        // Held until the record is gone: another pack, and every reader's recovery, waits.
        guard (try? file.lock(exclusive: true)) != nil else { return false }
        let status = try file.status()
        let read = try base.file.status()
        let recordPath = AppendRecord.path(for: output)
        guard status.kind == .regular, status.linkCount == 1, status.device == read.device, status.inode == read.inode,
            status.size == base.fileSize, status.size == layout.start, try FileSystem.statusIfExists(recordPath) == nil
        else { return false }
        let oldLength = status.size
        guard let oldTailHash = try AppendRecord.hash(file, AppendRecord.oldTail(below: oldLength)) else { return false }
        var record = AppendRecord(device: status.device, inode: status.inode, oldLength: oldLength, oldTailHash: oldTailHash)
        try AtomicFile.write(record.encoded, to: recordPath, permissions: 0o644, durability: durability)
        do {
            let tail = try body(file)
            // The entries first, then the record of the tail, then the tail: a file that
            // ends with the recorded tail holds everything before it.
            if durability == .full { try file.sync() }
            record.newLength = tail.offset + Int64(tail.bytes.count)
            record.tailLength = Int64(tail.bytes.count)
            record.tailHash = ContentHash.of(tail.bytes)
            try AtomicFile.write(record.encoded, to: recordPath, permissions: 0o644, durability: durability)
            try tail.bytes.withUnsafeBytes { try file.write($0, at: tail.offset) }
            if durability == .full { try file.sync() }
        } catch {
            // Undone: the old archive is the first `oldLength` bytes. A crash here leaves
            // the record, and the next open does the same.
            if (try? file.truncate(to: oldLength)) != nil { try? FileSystem.remove(recordPath) }
            throw error
        }
        // Complete: the record only says so now. Should removing it fail, the next open
        // finds the tail it records and removes it.
        try FileSystem.remove(recordPath)
        if durability == .full { try FileSystem.syncDirectory(AppendRecovery.directory(of: output)) }
        try file.close()
        return true
    }
}

/// Local headers of the base, read through a 256 KiB window: the entries an append keeps
/// are checked in file order, mostly next to each other.
final class HeaderReader {
    private let descriptor: Int32
    private let path: String
    private var window: [UInt8] = []
    private var windowStart: Int64 = 0

    init(file: borrowing FileDescriptor) {
        descriptor = file.rawValue
        path = file.path
    }

    func bytes(at offset: Int64, count: Int) throws -> [UInt8]? {
        if offset < windowStart || offset + Int64(count) > windowStart + Int64(window.count) {
            var buffer = [UInt8](repeating: 0, count: max(count, 256 << 10))
            let got = try buffer.withUnsafeMutableBytes {
                try FileDescriptor.readFully(descriptor, path: path, into: $0, at: offset)
            }
            buffer.removeLast(buffer.count - got)
            window = buffer
            windowStart = offset
        }
        let start = Int(offset - windowStart)
        guard start + count <= window.count else { return nil }
        return Array(window[start..<(start + count)])
    }
}
