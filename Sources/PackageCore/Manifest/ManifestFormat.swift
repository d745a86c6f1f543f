/// The on-disk encoding of manifests (Specs/manifest.md): a base file holding every entry,
/// and delta files holding the entries one save changed. Little-endian, paths
/// prefix-compressed against the previous record; each file one `ChecksummedFrame`.
enum ManifestFormat {
    /// 2 added chunk lists to regular-file records (flag bit 1); version 1 files still load.
    static let version: UInt32 = 2
    static let indexMagic: [UInt8] = Array("PKGIDX".utf8) + [0, 0]
    static let deltaMagic: [UInt8] = Array("PKGDLT".utf8) + [0, 0]
    static let indexHeaderSize = 64
    static let deltaHeaderSize = 112
    static let checksumSize = ChecksummedFrame.checksumSize

    enum RecordOperation: UInt8 {
        case upsert = 1
        case remove = 2
    }

    static func kindCode(_ kind: FileKind) -> UInt8 {
        switch kind {
        case .regular: return 1
        case .directory: return 2
        case .symbolicLink: return 3
        default: return 0
        }
    }

    static func kind(code: UInt8) -> FileKind? {
        switch code {
        case 1: return .regular
        case 2: return .directory
        case 3: return .symbolicLink
        default: return nil
        }
    }

    /// Appends the path of a record, sharing its prefix with the previous record's path.
    static func appendPath(_ path: String, previous: inout [UInt8], to writer: inout ByteWriter) {
        let bytes = Array(path.utf8)
        var shared = 0
        let limit = min(bytes.count, previous.count, Int(UInt16.max))
        while shared < limit && bytes[shared] == previous[shared] { shared += 1 }
        writer.append(UInt16(shared))
        writer.append(UInt16(bytes.count - shared))
        writer.append(contentsOf: bytes[shared...])
        previous = bytes
    }

    static func readPath(_ reader: inout ByteReader, previous: inout [UInt8]) throws(ByteReader.Truncated) -> String? {
        var shared = 0
        return try readPath(&reader, previous: &previous, shared: &shared)
    }

    /// Reads a prefix-compressed path; `shared` receives the bytes it shares with the
    /// previous one. Nil when it is malformed, or not strictly after the previous path in
    /// depth-first order (decided from the first differing byte: "/" sorts lowest).
    static func readPath(_ reader: inout ByteReader, previous: inout [UInt8], shared: inout Int)
        throws(ByteReader.Truncated) -> String?
    {
        shared = Int(try reader.read(UInt16.self))
        let suffixLength = Int(try reader.read(UInt16.self))
        guard shared <= previous.count else { return nil }
        let suffix = try reader.bytes(suffixLength)
        if !previous.isEmpty {
            if shared < previous.count {
                // The new path leaves the previous one at byte `shared`: it must sort after it.
                guard suffixLength > 0,
                    PathOrder.order(previous[shared], suffix[0], slashIsLowest: true) < 0
                        && previous[shared] != suffix[0]
                else { return nil }
            } else if suffixLength == 0 {
                return nil  // the same path twice
            }
        }
        previous.removeSubrange(shared...)
        previous.append(contentsOf: suffix)
        return makeString(previous)
    }

    /// A string from UTF-8 bytes, nil when they are not valid UTF-8. (Not the generic
    /// `String(validating:as:)`: it instantiates generic metadata on every call, a tenth of
    /// the time of loading a large manifest.)
    @inline(__always)
    static func makeString(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer { buffer in
            var valid = true
            let text = String(unsafeUninitializedCapacity: buffer.count) { target in
                _ = target.initialize(from: buffer)
                return buffer.count
            }
            // String repairs invalid sequences with U+FFFD, which changes the byte count or content.
            // (The checksum already rules out damage; this only guards against a faulty writer.)
            if text.utf8.count != buffer.count { valid = false }
            return valid ? text : nil
        }
    }

    /// Record flag bits.
    static let hasSourceStamp: UInt8 = 1
    static let hasChunkList: UInt8 = 2

    /// Appends one entry: path, kind, permissions, size, times, inode, hash, link target,
    /// source stamp, chunk list.
    static func appendEntry(_ entry: SnapshotEntry, previous: inout [UInt8], to writer: inout ByteWriter) {
        appendPath(entry.path, previous: &previous, to: &writer)
        writer.append(kindCode(entry.kind))
        let chunks = recordableChunks(of: entry)
        writer.append((entry.source == nil ? 0 : hasSourceStamp) | (chunks == nil ? 0 : hasChunkList))
        writer.append(UInt16(truncatingIfNeeded: entry.permissions & 0o7777))
        writer.append(UInt64(bitPattern: entry.size))
        writer.append(entry.modificationTime)
        writer.append(entry.changeTime)
        writer.append(entry.inode)
        writer.append(entry.device)
        writer.append(entry.hash)
        if entry.kind == .symbolicLink {
            let target = Array((entry.linkTarget ?? "").utf8)
            writer.append(UInt16(truncatingIfNeeded: target.count))
            writer.append(contentsOf: target)
        }
        if let source = entry.source {
            writer.append(source.device)
            writer.append(source.inode)
            writer.append(source.modificationTime)
            writer.append(source.changeTime)
        }
        if let chunks {
            writer.append(UInt32(chunks.count))
            for chunk in chunks {
                writer.append(UInt32(chunk.length))
                writer.append(chunk.hash)
            }
        }
    }

    /// The bytes `appendEntry` writes for `entries` in order: the exact capacity of an index,
    /// which a million entries would otherwise overshoot by half as the buffer doubles.
    static func encodedLength(of entries: [SnapshotEntry]) -> Int {
        // Path lengths (2 + 2), kind, flags, permissions, size, three times, inode, device, hash.
        let fixed = 4 + 1 + 1 + 2 + 8 * 5 + 16
        var total = 0
        var previous = ""
        for entry in entries {
            var shared = 0
            for (old, new) in zip(previous.utf8, entry.path.utf8) {
                guard old == new, shared < Int(UInt16.max) else { break }
                shared += 1
            }
            total += fixed + entry.path.utf8.count - shared
            if entry.kind == .symbolicLink { total += 2 + (entry.linkTarget?.utf8.count ?? 0) }
            if entry.source != nil { total += 32 }
            if let chunks = recordableChunks(of: entry) { total += 4 + chunks.count * 20 }
            previous = entry.path
        }
        return total
    }

    /// Reads one entry and appends it to `entries` (no intermediate copy of the large
    /// struct), its folder shared with its siblings' through `folders`; false when the
    /// record is malformed.
    static func readEntry(
        _ reader: inout ByteReader, previous: inout [UInt8], shared: inout Int, version: UInt32,
        folders: inout FolderInterner, appendingTo entries: inout [SnapshotEntry]
    ) throws(ByteReader.Truncated) -> Bool {
        guard let path = try readPath(&reader, previous: &previous, shared: &shared), !path.isEmpty else { return false }
        guard let kind = kind(code: try reader.read(UInt8.self)) else { return false }
        let flags = try reader.read(UInt8.self)
        guard flags & ~(version >= 2 ? hasSourceStamp | hasChunkList : hasSourceStamp) == 0 else { return false }
        let permissions = UInt32(try reader.read(UInt16.self))
        let size = Int64(bitPattern: try reader.read(UInt64.self))
        let modificationTime = try reader.read(Int64.self)
        let changeTime = try reader.read(Int64.self)
        let inode = try reader.read(UInt64.self)
        let device = try reader.read(UInt64.self)
        let hash = try reader.hash()
        var linkTarget: String?
        if kind == .symbolicLink {
            let length = Int(try reader.read(UInt16.self))
            linkTarget = String(decoding: try reader.bytes(length), as: UTF8.self)
        }
        var source: SourceStamp?
        if flags & hasSourceStamp != 0 {
            source = SourceStamp(
                device: try reader.read(UInt64.self), inode: try reader.read(UInt64.self),
                modificationTime: try reader.read(Int64.self), changeTime: try reader.read(Int64.self))
        }
        var chunks: ChunkList?
        if flags & hasChunkList != 0 {
            guard kind == .regular, let list = try readChunkList(&reader, size: size) else { return false }
            chunks = list
        }
        entries.append(
            SnapshotEntry(
                storedPath: folders.path(path), kind: kind, permissions: permissions, size: size, hash: hash,
                modificationTime: modificationTime, changeTime: changeTime, inode: inode, device: device,
                linkTarget: linkTarget, source: source, chunks: chunks))
        return true
    }

    /// The entry's chunk list when a record can carry it: a regular file's, covering exactly
    /// its size, with lengths that fit the record's 32-bit fields.
    static func recordableChunks(of entry: SnapshotEntry) -> ChunkList? {
        guard entry.kind == .regular, let chunks = entry.chunks, chunks.totalLength == entry.size,
            chunks.count <= Int(UInt32.max), chunks.allSatisfy({ $0.length <= Int64(UInt32.max) })
        else { return nil }
        return chunks
    }

    /// Reads `u32 count` then `count` × (`u32 length`, 16-byte hash); nil unless there is at
    /// least one chunk, every length is positive and they add up to the file's `size`.
    static func readChunkList(_ reader: inout ByteReader, size: Int64) throws(ByteReader.Truncated) -> ChunkList? {
        let count = Int(try reader.read(UInt32.self))
        guard count > 0 else { return nil }
        // More than the bytes at hand can hold: cut short (a reader of the file in pieces
        // then reads on; one that holds it whole refuses it).
        guard count <= reader.remaining / 20 else { throw ByteReader.Truncated() }
        var chunks: [FileChunk] = []
        chunks.reserveCapacity(count)
        var offset: Int64 = 0
        for _ in 0..<count {
            let length = Int64(try reader.read(UInt32.self))
            guard length > 0 else { return nil }
            chunks.append(FileChunk(offset: offset, length: length, hash: try reader.hash()))
            offset += length
        }
        return offset == size ? ChunkList(contiguous: chunks) : nil
    }

    // MARK: Base file

    /// The base file for `snapshot`; `relinkWindow` as in delta headers; `packageIdentity`
    /// the inode of the package root it is written for (0: unknown).
    static func encodeIndex(
        _ snapshot: TreeSnapshot, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(indexHeaderSize + encodedLength(of: snapshot.entries) + checksumSize)
        writeIndex(snapshot, relinkWindow: relinkWindow, packageIdentity: packageIdentity) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// The bytes `encodeIndex` returns, handed to `sink` in pieces of about 1 MiB (a
    /// manifest of a million entries is never held whole); returns their count and the
    /// checksum that ends them.
    @discardableResult
    static func writeIndex(
        _ snapshot: TreeSnapshot, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0,
        to sink: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> (byteCount: Int, checksum: ContentHash) {
        try writeIndex(
            entryCount: snapshot.entries.count, rootHash: snapshot.rootHash, relinkWindow: relinkWindow,
            packageIdentity: packageIdentity, entry: { snapshot.entries[$0] }, to: sink)
    }

    /// The same for a tree of `entryCount` entries that `entry` hands one at a time, in
    /// order (a save records its new tree without making a second copy of it).
    @discardableResult
    static func writeIndex(
        entryCount: Int, rootHash: ContentHash, relinkWindow: ClosedRange<Int64>? = nil, packageIdentity: UInt64 = 0,
        entry: (Int) -> SnapshotEntry, to sink: (UnsafeRawBufferPointer) throws -> Void
    ) rethrows -> (byteCount: Int, checksum: ContentHash) {
        let pieceSize = 1 << 20
        var frame = ChecksummedFrame.Writer(magic: indexMagic, version: version, capacity: pieceSize + 64 << 10)
        frame.writer.append(UInt32(0))
        frame.writer.append(UInt64(entryCount))
        frame.writer.append(rootHash)
        frame.writer.append((relinkWindow ?? 0...0).lowerBound)
        frame.writer.append((relinkWindow ?? 0...0).upperBound)
        frame.writer.append(packageIdentity)
        var byteCount = 0
        var previous: [UInt8] = []
        var next = 0
        while true {
            while next < entryCount && frame.writer.count < pieceSize {
                appendEntry(entry(next), previous: &previous, to: &frame.writer)
                next += 1
            }
            byteCount += frame.writer.count
            guard next == entryCount else {
                try frame.flush(to: sink)
                continue
            }
            // The checksum ends the last piece: a small manifest is still one write.
            let checksum = frame.finish()
            try frame.writer.bytes.withUnsafeBytes { try sink($0) }
            return (byteCount + checksumSize, checksum)
        }
    }

    struct DecodedIndex {
        var entries: [SnapshotEntry]
        var rootHash: ContentHash
        var relinkWindow: ClosedRange<Int64>
        var checksum: ContentHash
        /// The package root's inode the file was written for; 0 when unknown (version 1).
        var packageIdentity: UInt64
    }

    // MARK: Delta files

    struct DeltaHeader {
        var sequence: UInt64
        var baseChecksum: ContentHash
        var previousChecksum: ContentHash
        var rootHash: ContentHash
        /// The window in which the save that wrote this delta hard-linked unchanged files
        /// (their status-change times moved into it); empty (0...0) when it linked none.
        var relinkWindow: ClosedRange<Int64>
        var entryCount: UInt64
        /// The package root's inode the delta was written for; 0 when unknown (version 1).
        var packageIdentity: UInt64 = 0
    }

    struct DecodedDelta {
        var header: DeltaHeader
        var upserts: [SnapshotEntry]
        var removals: [String]
        var checksum: ContentHash
    }

    static func encodeDelta(
        header: DeltaHeader, upserts: [SnapshotEntry], removals: [String]
    ) -> [UInt8] {
        var frame = ChecksummedFrame.Writer(
            magic: deltaMagic, version: version,
            capacity: deltaHeaderSize + (upserts.count + removals.count) * 80 + checksumSize)
        frame.writer.append(UInt32(0))
        frame.writer.append(header.sequence)
        frame.writer.append(header.baseChecksum)
        frame.writer.append(header.previousChecksum)
        frame.writer.append(header.rootHash)
        frame.writer.append(header.relinkWindow.lowerBound)
        frame.writer.append(header.relinkWindow.upperBound)
        frame.writer.append(UInt64(upserts.count + removals.count))
        frame.writer.append(header.entryCount)
        frame.writer.append(header.packageIdentity)
        // Removals first, then upserts, each group in path order without duplicates (the
        // last upsert of a path wins).
        var previous: [UInt8] = []
        var uniqueRemovals: [String] = []
        for path in removals.sorted(by: PathOrder.pathLess)
        where uniqueRemovals.last.map({ !PathOrder.sameBytes($0, path) }) ?? true {
            uniqueRemovals.append(path)
        }
        var uniqueUpserts: [SnapshotEntry] = []
        for entry in upserts.enumerated().sorted(by: { first, second in
            let order = PathOrder.compareBytes(first.element.path, second.element.path, slashIsLowest: true)
            return order != 0 ? order < 0 : first.offset < second.offset
        }).map(\.element) {
            if let last = uniqueUpserts.last, PathOrder.sameBytes(last.path, entry.path) {
                uniqueUpserts[uniqueUpserts.count - 1] = entry
            } else {
                uniqueUpserts.append(entry)
            }
        }
        // The record count is patched once the unique records are known.
        let countOffset = 8 + 4 + 4 + 8 + 16 * 3 + 8 + 8
        frame.writer.patch(UInt64(uniqueRemovals.count + uniqueUpserts.count), at: countOffset)
        for path in uniqueRemovals {
            frame.writer.append(RecordOperation.remove.rawValue)
            appendPath(path, previous: &previous, to: &frame.writer)
        }
        previous = []
        for entry in uniqueUpserts {
            frame.writer.append(RecordOperation.upsert.rawValue)
            appendEntry(entry, previous: &previous, to: &frame.writer)
        }
        frame.finish()
        return frame.writer.bytes
    }

    static func decodeDelta(_ bytes: UnsafeRawBufferPointer, path: String) throws(ManifestError) -> DecodedDelta {
        let frame = try openFrame(bytes, magic: deltaMagic, headerSize: deltaHeaderSize, path: path)
        var reader = ByteReader(frame.payload)
        do {
            let (header, recordCount) = try readDeltaHeader(&reader, version: frame.version, path: path)
            let (upserts, removals) = try readDeltaRecords(&reader, count: recordCount, version: frame.version, path: path)
            guard reader.remaining == 0 else {
                throw ManifestError(path: path, reason: .inconsistent("bytes after the last record"))
            }
            return DecodedDelta(header: header, upserts: upserts, removals: removals, checksum: frame.checksum)
        } catch let error as ManifestError {
            throw error
        } catch {
            throw ManifestError(path: path, reason: .truncated)
        }
    }

    /// A delta's header fields and its record count, the count checked against the bytes
    /// that are there (a record takes at least 5), never trusted to size anything.
    private static func readDeltaHeader(_ reader: inout ByteReader, version: UInt32, path: String) throws
        -> (DeltaHeader, recordCount: UInt64)
    {
        _ = try reader.read(UInt32.self)  // flags
        let sequence = try reader.read(UInt64.self)
        let baseChecksum = try reader.hash()
        let previousChecksum = try reader.hash()
        let rootHash = try reader.hash()
        let windowStart = try reader.read(Int64.self)
        let windowEnd = try reader.read(Int64.self)
        let recordCount = try reader.read(UInt64.self)
        let entryCount = try reader.read(UInt64.self)
        let identity = try reader.read(UInt64.self)  // reserved (0) in version 1
        guard windowStart <= windowEnd, recordCount <= UInt64(reader.remaining / 5) else {
            throw ManifestError(path: path, reason: .inconsistent("malformed header"))
        }
        let header = DeltaHeader(
            sequence: sequence, baseChecksum: baseChecksum, previousChecksum: previousChecksum,
            rootHash: rootHash, relinkWindow: windowStart...windowEnd, entryCount: entryCount,
            packageIdentity: version >= 2 ? identity : 0)
        return (header, recordCount)
    }

    /// A delta's records: every removal, then every upsert (paths prefix-compressed
    /// against the record before of the same kind; upserts share their folders).
    private static func readDeltaRecords(_ reader: inout ByteReader, count: UInt64, version: UInt32, path: String) throws
        -> (upserts: [SnapshotEntry], removals: [String])
    {
        var upserts: [SnapshotEntry] = []
        var removals: [String] = []
        var previous: [UInt8] = []
        var shared = 0
        // One interner for all upserts: siblings share their folder's path.
        var folders = FolderInterner()
        var lastOperation = RecordOperation.remove
        for _ in 0..<count {
            guard let operation = RecordOperation(rawValue: try reader.read(UInt8.self)) else {
                throw ManifestError(path: path, reason: .inconsistent("unknown record type"))
            }
            if operation != lastOperation {
                guard operation == .upsert else {
                    throw ManifestError(path: path, reason: .inconsistent("removal after upserts"))
                }
                previous = []
                lastOperation = operation
            }
            switch operation {
            case .remove:
                guard let removed = try readPath(&reader, previous: &previous), !removed.isEmpty else {
                    throw ManifestError(path: path, reason: .inconsistent("malformed removal"))
                }
                removals.append(removed)
            case .upsert:
                guard
                    try readEntry(
                        &reader, previous: &previous, shared: &shared, version: version, folders: &folders,
                        appendingTo: &upserts)
                else {
                    throw ManifestError(path: path, reason: .inconsistent("malformed record"))
                }
            }
        }
        return (upserts, removals)
    }

    /// The file's frame (`ChecksummedFrame`), refused as a manifest error: a file shorter
    /// than its header is truncated.
    private static func openFrame(
        _ bytes: UnsafeRawBufferPointer, magic: [UInt8], headerSize: Int, path: String
    ) throws(ManifestError) -> ChecksummedFrame.Opened {
        do throws(ChecksummedFrame.Refusal) {
            return try ChecksummedFrame.open(
                bytes, magic: magic, highestVersion: version, minimumPayload: headerSize - ChecksummedFrame.headerSize)
        } catch {
            throw ManifestError(path: path, refusal: error)
        }
    }
}
