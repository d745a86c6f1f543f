/// The manifest's base file decoded as it is read, a piece at a time: at a million entries
/// the file is about 70 MB, and held whole beside the entries it decodes to it was a third
/// of every command's peak (Specs/manifest.md, "Memory").
///
/// Every byte before the trailing checksum is hashed as it arrives, and the entries are
/// returned only when the checksum matches. Until then they are decoded as the untrusted
/// bytes they may be, with the same checks as ever; and any refusal of a damaged file is
/// reported as the checksum's when the checksum does not match either, as a file checked
/// whole before decoding reported it.
extension ManifestFormat {
    /// Decodes the base file open as `file`, `size` bytes long.
    static func decodeIndex(file: borrowing FileDescriptor, size: Int64, path: String) throws -> DecodedIndex {
        var prefix = [UInt8](repeating: 0, count: ChecksummedFrame.headerSize)
        let read = try prefix.withUnsafeMutableBytes { try FileDescriptor.readFully(file.rawValue, path: path, into: $0, at: 0) }
        let version: UInt32
        do {
            version = try prefix.withUnsafeBytes { bytes in
                try ChecksummedFrame.openPrefix(
                    UnsafeRawBufferPointer(rebasing: bytes[..<read]), magic: indexMagic, highestVersion: self.version,
                    minimumPayload: indexHeaderSize - ChecksummedFrame.headerSize, frameSize: Int(size))
            }
        } catch let refusal as ChecksummedFrame.Refusal {
            throw ManifestError(path: path, refusal: refusal)
        }
        var window = try FileWindow(file.rawValue, size: size, path: path)
        window.consume(ChecksummedFrame.headerSize)
        let decoded: Result<DecodedIndex, ManifestError>
        do {
            decoded = .success(try decodeIndexPayload(&window, version: version, path: path))
        } catch let refusal as ManifestError {
            decoded = .failure(refusal)
        }
        // Damage shows as a checksum mismatch first, as when the file was checked whole.
        guard try window.checksumMatches() else { throw ManifestError(path: path, reason: .checksumMismatch) }
        var index = try decoded.get()
        index.checksum = window.storedChecksum
        return index
    }

    /// The header fields and the records after the frame's magic and version.
    private static func decodeIndexPayload(_ window: inout FileWindow, version: UInt32, path: String) throws
        -> DecodedIndex
    {
        let fieldsSize = indexHeaderSize - ChecksummedFrame.headerSize
        guard try window.holds(fieldsSize) else { throw ManifestError(path: path, reason: .truncated) }
        var header = ByteReader(window.unread)
        let (count, rootHash, windowStart, windowEnd, identity): (UInt64, ContentHash, Int64, Int64, UInt64)
        do throws(ByteReader.Truncated) {
            _ = try header.read(UInt32.self)  // flags
            (count, rootHash) = (try header.read(UInt64.self), try header.hash())
            (windowStart, windowEnd) = (try header.read(Int64.self), try header.read(Int64.self))
            identity = try header.read(UInt64.self)  // reserved (0) in version 1
        } catch {
            throw ManifestError(path: path, reason: .truncated)
        }
        window.consume(fieldsSize)
        guard windowStart <= windowEnd else { throw ManifestError(path: path, reason: .inconsistent("malformed header")) }
        // Each record takes at least 64 bytes: a count beyond that is damage, not a reason to allocate.
        guard count <= UInt64(window.payloadRemaining / 64) else {
            throw ManifestError(path: path, reason: .inconsistent("entry count \(count) exceeds the file"))
        }
        let entries = try decodeIndexRecords(&window, count: Int(count), version: version, path: path)
        guard window.payloadRemaining == 0 else {
            throw ManifestError(path: path, reason: .inconsistent("\(window.payloadRemaining) bytes after the last record"))
        }
        return DecodedIndex(
            entries: entries, rootHash: rootHash, relinkWindow: windowStart...windowEnd, checksum: ContentHash(high: 0, low: 0),
            packageIdentity: version >= 2 ? identity : 0)
    }

    /// `count` records, each decoded from the window and read again from its start, with
    /// more bytes behind it, when it runs past the bytes read so far.
    private static func decodeIndexRecords(_ window: inout FileWindow, count: Int, version: UInt32, path: String)
        throws -> [SnapshotEntry]
    {
        var entries: [SnapshotEntry] = []
        entries.reserveCapacity(count)
        var previous: [UInt8] = []
        previous.reserveCapacity(256)
        var previousBefore: [UInt8] = []
        previousBefore.reserveCapacity(256)
        // Open directories: (index, path length, smallest prefix shared since). An entry
        // lies inside the top one while every path since it kept its bytes and the
        // entry continues it with "/".
        var open: [(index: Int, length: Int, kept: Int)] = []
        var shared = 0
        var folders = FolderInterner()
        for _ in 0..<count {
            let index = entries.count
            previousBefore.removeAll(keepingCapacity: true)
            previousBefore.append(contentsOf: previous)
            var wellFormed: Bool?
            while wellFormed == nil {
                var reader = ByteReader(window.unread)
                do throws(ByteReader.Truncated) {
                    wellFormed = try readEntry(
                        &reader, previous: &previous, shared: &shared, version: version, folders: &folders,
                        appendingTo: &entries)
                    window.consume(reader.offset)
                } catch {
                    // Nothing was appended: the path goes back to the previous record's,
                    // and the record is read again once more bytes are behind it.
                    previous.removeAll(keepingCapacity: true)
                    previous.append(contentsOf: previousBefore)
                    guard try window.readMore() else { throw ManifestError(path: path, reason: .truncated) }
                }
            }
            guard wellFormed == true else {
                throw ManifestError(path: path, reason: .inconsistent("malformed record \(index) or out of order"))
            }
            for slot in open.indices where open[slot].kept > shared { open[slot].kept = shared }
            while let top = open.last, !(top.kept >= top.length && previous.count > top.length && previous[top.length] == 0x2F) {
                entries[top.index].descendantCount = index - top.index - 1
                open.removeLast()
            }
            if entries[index].kind == .directory { open.append((index, previous.count, Int.max)) }
        }
        for top in open { entries[top.index].descendantCount = entries.count - top.index - 1 }
        return entries
    }
}

extension ManifestError {
    /// A frame's refusal as a manifest error about the file at `path`.
    init(path: String, refusal: ChecksummedFrame.Refusal) {
        switch refusal {
        case .truncated: self.init(path: path, reason: .truncated)
        case .badMagic: self.init(path: path, reason: .badMagic)
        case .futureVersion(let version): self.init(path: path, reason: .futureVersion(version))
        case .checksumMismatch: self.init(path: path, reason: .checksumMismatch)
        }
    }
}

/// A file read forward through a buffer of at least 1 MiB: the bytes not yet decoded stay
/// at its front, more are read behind them when the decoder asks, and every byte before
/// the trailing checksum is hashed once, as it arrives.
struct FileWindow: ~Copyable {
    private let descriptor: Int32
    private let path: String
    private var buffer: UnsafeMutableRawBufferPointer
    /// The first byte not yet consumed, and the end of the bytes read, in `buffer`.
    private var start = 0
    private var end = 0
    /// The file offset of `buffer[end]`.
    private var position: Int64 = 0
    /// Where the trailing checksum starts.
    private let payloadEnd: Int64
    private let hasher = ContentHasher()

    init(_ descriptor: Int32, size: Int64, path: String) throws {
        self.descriptor = descriptor
        self.path = path
        payloadEnd = max(0, size - Int64(ChecksummedFrame.checksumSize))
        buffer = .allocate(byteCount: 1 << 20, alignment: 16)
        _ = try readMore()
    }

    deinit { buffer.deallocate() }

    /// The bytes read and not yet consumed.
    var unread: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[start..<end]) }

    /// Payload bytes not yet consumed, read or not.
    var payloadRemaining: Int { end - start + Int(payloadEnd - position) }

    mutating func consume(_ count: Int) { start += count }

    /// Whether `count` unconsumed bytes can be had (reading more as needed).
    mutating func holds(_ count: Int) throws -> Bool {
        while end - start < count { guard try readMore() else { return false } }
        return true
    }

    /// Reads more of the file behind the unconsumed bytes (moved to the front, the buffer
    /// doubled when they fill it); false when the payload is all read.
    mutating func readMore() throws -> Bool {
        guard position < payloadEnd else { return false }
        if start > 0 {
            buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: end - start)
            (start, end) = (0, end - start)
        }
        if end == buffer.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
            larger.baseAddress!.copyMemory(from: buffer.baseAddress!, byteCount: end)
            buffer.deallocate()
            buffer = larger
        }
        let wanted = Int(min(Int64(buffer.count - end), payloadEnd - position))
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[end..<(end + wanted)])
        let count = try FileDescriptor.readFully(descriptor, path: path, into: target, at: position)
        // A file cut short while it is read: what is missing is truncation.
        guard count > 0 else { throw ManifestError(path: path, reason: .truncated) }
        hasher.update(UnsafeRawBufferPointer(rebasing: target[..<count]))
        end += count
        position += Int64(count)
        return true
    }

    /// The checksum stored at the file's end (read by `checksumMatches`).
    private(set) var storedChecksum = ContentHash(high: 0, low: 0)

    /// Hashes what is left of the payload unread, then reads the stored checksum: whether
    /// the two agree.
    mutating func checksumMatches() throws -> Bool {
        start = end
        while try readMore() { start = end }
        var stored = [UInt8](repeating: 0, count: ChecksummedFrame.checksumSize)
        let count = try stored.withUnsafeMutableBytes { try FileDescriptor.readFully(descriptor, path: path, into: $0, at: payloadEnd) }
        guard count == stored.count else { return false }
        storedChecksum = stored.withUnsafeBytes { ContentHash(canonicalBytes: $0) }
        return storedChecksum == hasher.digest()
    }
}
