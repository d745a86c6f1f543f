import PackageCore

/// Where one piece of a file lives on the remote: a blob of a pack.
package struct BlobLocation: Sendable, Hashable {
    /// SHA-256 of the blob's bytes: checked before the bytes are used.
    package var digest: SHA256Digest
    /// The pack holding it, shared with the other blobs located in that pack.
    package var packName: PackName
    package var offset: UInt32
    package var length: UInt32

    /// The pack's SHA-256 (its object's name).
    package var pack: SHA256Digest {
        get { packName.digest }
        set { packName = PackName(newValue) }
    }

    /// A blob in the pack `packName` (shared: what decoders and uploaders make).
    package init(digest: SHA256Digest, packName: PackName, offset: UInt32, length: UInt32) {
        self.digest = digest
        self.packName = packName
        self.offset = offset
        self.length = length
    }

    /// A blob in the pack named `pack`, with a name of its own (for one-off locations).
    package init(digest: SHA256Digest, pack: SHA256Digest, offset: UInt32, length: UInt32) {
        self.init(digest: digest, packName: PackName(pack), offset: offset, length: length)
    }
}

/// A pack's name, held once and shared by every blob located in it: a version of a million
/// small files has a few hundred packs, and a digest in every location would repeat each
/// 32-byte name thousands of times (a location is 48 bytes instead of 72). Equal and hashed
/// by the digest, never by identity.
package final class PackName: Sendable, Hashable {
    package let digest: SHA256Digest

    package init(_ digest: SHA256Digest) { self.digest = digest }

    package static func == (lhs: PackName, rhs: PackName) -> Bool { lhs === rhs || lhs.digest == rhs.digest }
    package func hash(into hasher: inout Hasher) { hasher.combine(digest) }
}

/// One entry of a version: what a snapshot entry says, plus a regular file's blobs.
package struct RemoteEntry: Sendable, Hashable {
    /// The path as stored: its folder shared with its siblings (`EntryPath`).
    package var entryPath: EntryPath
    package var kind: FileKind
    package var permissions: UInt32
    /// A file's bytes (the sum of its blobs' lengths); a link's target bytes; 0 for a directory.
    package var size: Int64
    package var modificationTime: Int64
    /// XXH3-128 of a file's bytes or a link's target (Specs/hashing.md); zero for directories
    /// (their Merkle hashes are recomputed from their children).
    package var contentHash: ContentHash
    package var linkTarget: String?
    /// A regular file's pieces, in order. A decoded manifest's entries are slices of one
    /// array of all its blobs: a million small files are not a million small arrays.
    package var blobs: ArraySlice<BlobLocation>

    /// The relative path (a new string when the folder is shared).
    package var path: String {
        get { entryPath.string }
        set { entryPath = EntryPath(whole: newValue) }
    }
}

extension RemoteEntry {
    /// An entry at `path`, kept whole.
    package init(
        path: String, kind: FileKind, permissions: UInt32, size: Int64, modificationTime: Int64,
        contentHash: ContentHash, linkTarget: String?, blobs: ArraySlice<BlobLocation>
    ) {
        self.init(
            entryPath: EntryPath(whole: path), kind: kind, permissions: permissions, size: size,
            modificationTime: modificationTime, contentHash: contentHash, linkTarget: linkTarget, blobs: blobs)
    }

    /// Whether this entry, whose blobs are `blobs`, says exactly what `other` says: names
    /// and link targets compared as bytes (Swift's `String ==` equates canonical twins).
    func isSame(as other: RemoteEntry, blobs: ArraySlice<BlobLocation>) -> Bool {
        entryPath == other.entryPath && kind == other.kind && permissions == other.permissions
            && size == other.size && modificationTime == other.modificationTime && contentHash == other.contentHash
            && sameTarget(as: other) && blobs.elementsEqual(other.blobs)
    }

    private func sameTarget(as other: RemoteEntry) -> Bool {
        switch (linkTarget, other.linkTarget) {
        case (nil, nil): true
        case (let target?, let otherTarget?): PathOrder.sameBytes(target, otherTarget)
        default: false
        }
    }
}

/// One version of a remote: its summary and every entry, in depth-first path order.
///
/// Stored as `versions/<sha256>` (Specs/remote.md, "The version manifest"): a fixed 128-byte
/// header that `log` can read with a ranged GET, for a merge (format 2) its second parent's
/// id, then a zlib stream of the pack table and the entries. Decoding refuses anything out of bounds, out of order or inconsistent, and
/// checks that the entries hash to the root the header states.
struct VersionManifest: Sendable {
    static let magic: [UInt8] = Array("PKGRVER".utf8) + [0]
    /// The newest format this pkgtool reads. Format 1 has no second parent; format 2 is
    /// written only for a merge (a second parent), so that older readers still read every
    /// other version, and refuse a merge as "a newer format" rather than misread it.
    static let formatVersion: UInt32 = 2
    /// The fixed header every format starts with (what `log` reads first).
    static let headerSize = 128
    /// Format 2's header: the fixed one, then the second parent's id (32 bytes).
    static let mergeHeaderSize = 160
    /// Refuses manifests that would inflate beyond this (a hostile store's zip bomb).
    static let maximumBodySize = 1 << 30
    /// A body may inflate to this many times its compressed size, beyond a floor: what a
    /// manifest takes in memory follows the bytes that arrived, never a header's claim.
    /// Entries of real files barely compress (each one's SHA-256 and XXH3; paths share their
    /// prefixes already): about 2-fold. Empty files, which have neither, are the most
    /// compressible real entries: a version of 100,000 of them inflates about 125-fold.
    static let maximumInflation = 256
    static let inflationFloor = 16 << 20

    var sequence: Int
    var time: Int64
    var parent: SHA256Digest?
    /// A merge's second parent (format 2); nil otherwise (format 1).
    var secondParent: SHA256Digest? = nil
    var rootHash: ContentHash
    var entries: [RemoteEntry]

    var size: Int64 { entries.reduce(0) { $0 + ($1.kind == .regular ? $1.size : 0) } }

    /// What the manifest's fixed header says of it (all of its summary but its id).
    struct Header {
        var sequence: Int
        var time: Int64
        var parent: SHA256Digest?
        var secondParent: SHA256Digest?
        var rootHash: ContentHash
        var size: Int64
        var entryCount: Int

        func summary(id: SHA256Digest) -> VersionSummary {
            VersionSummary(
                id: id, sequence: sequence, time: time, parent: parent, secondParent: secondParent, rootHash: rootHash,
                size: size, entryCount: entryCount)
        }
    }

    var header: Header {
        Header(
            sequence: sequence, time: time, parent: parent, secondParent: secondParent, rootHash: rootHash, size: size,
            entryCount: entries.count)
    }

    func summary(id: SHA256Digest) -> VersionSummary { header.summary(id: id) }

    /// The tree the version describes, with directory hashes computed (for diffs).
    func snapshot() -> TreeSnapshot {
        TreeSnapshot.assemble(
            entries.map { entry in
                SnapshotEntry(
                    storedPath: entry.entryPath, kind: entry.kind, permissions: entry.permissions, size: entry.size,
                    hash: entry.contentHash, modificationTime: entry.modificationTime, linkTarget: entry.linkTarget)
            })
    }

    /// The Merkle root of the entries, computed without building a snapshot (the check of a
    /// decoded manifest holds no second copy of its entries).
    func computedRootHash() -> ContentHash {
        Self.rootHash(count: entries.count) { entries[$0] }
    }

    /// The Merkle root of `count` entries read through `entry`, in depth-first order.
    static func rootHash(count: Int, entry: (Int) -> RemoteEntry) -> ContentHash {
        MerkleWalk.rootHash(
            count: count,
            item: { index in
                let entry = entry(index)
                return MerkleWalk.Item(
                    path: entry.path, kind: entry.kind, tag: EntryTag(kind: entry.kind, permissions: entry.permissions) ?? .file,
                    hash: entry.contentHash)
            },
            finished: { _, _, _ in })
    }

    // MARK: Encoding

    /// The manifest's bytes. The body is deflated as it is written, 256 KiB at a time,
    /// straight after the header: what this holds besides the result is one such piece
    /// (not the whole body, its deflated copy and the two joined).
    func encoded() -> [UInt8] { Self.encoded(header, entries: entries) }

    /// The bytes of the manifest `header` describes, whose entries are `entries` (walked
    /// twice: for the pack table, then for the records).
    static func encoded(_ header: Header, entries: some Sequence<RemoteEntry>) -> [UInt8] {
        var packs: [SHA256Digest] = []
        var packIndex: [SHA256Digest: UInt32] = [:]
        for entry in entries {
            for blob in entry.blobs where packIndex[blob.pack] == nil {
                packIndex[blob.pack] = UInt32(packs.count)
                packs.append(blob.pack)
            }
        }
        // Entries of real files take about 70 bytes each once deflated (their SHA-256 and
        // XXH3 barely compress): room for that, growing only beyond.
        var output = ByteWriter(capacity: Self.mergeHeaderSize + header.entryCount * 72 + packs.count * 32)
        encodeHeader(header, into: &output, packCount: packs.count)
        var deflater = Deflater(level: 6, framing: .zlib)
        deflater.beginStream()
        let piece = 256 << 10
        var body = ByteWriter(capacity: piece + 8 << 10)
        var bodySize = 0
        func flush(final: Bool) {
            body.bytes.withUnsafeBytes { deflater.append($0, final: final) { output.append($0) } }
            bodySize += body.count
            body.removeAll()
        }
        for pack in packs {
            body.append(contentsOf: pack.bytes)
            if body.count >= piece { flush(final: false) }
        }
        var previous: [UInt8] = []
        for entry in entries {
            encodeEntry(entry, previous: &previous, packIndex: packIndex, into: &body)
            if body.count >= piece { flush(final: false) }
        }
        flush(final: true)
        let headerSize = Self.headerSize
        output.patch(UInt64(output.count - (header.secondParent == nil ? headerSize : Self.mergeHeaderSize)), at: headerSize - 16)
        output.patch(UInt64(bodySize), at: headerSize - 8)
        return output.bytes
    }

    /// The header, with its compressed and body sizes zero (`encoded` patches them in).
    private static func encodeHeader(_ fields: Header, into header: inout ByteWriter, packCount: Int) {
        header.append(contentsOf: Self.magic)
        header.append(UInt32(fields.secondParent == nil ? 1 : 2))
        header.append(UInt32(0))
        header.append(UInt64(fields.sequence))
        header.append(fields.time)
        header.append(fields.rootHash)
        header.append(UInt64(fields.size))
        header.append(UInt64(fields.entryCount))
        header.append(UInt64(packCount))
        header.append(UInt8(fields.parent == nil ? 0 : 1))
        header.append(contentsOf: [UInt8](repeating: 0, count: 7))
        header.append(contentsOf: fields.parent?.bytes ?? [UInt8](repeating: 0, count: 32))
        header.append(UInt64(0))  // compressed size
        header.append(UInt64(0))  // body size
        precondition(header.count == Self.headerSize)
        if let secondParent = fields.secondParent { header.append(contentsOf: secondParent.bytes) }
    }

    /// One entry's record: its path prefix-compressed against `previous`, its fields, a
    /// link's target or a file's blobs.
    private static func encodeEntry(
        _ entry: RemoteEntry, previous: inout [UInt8], packIndex: [SHA256Digest: UInt32], into body: inout ByteWriter
    ) {
        let path = Array(entry.path.utf8)
        var shared = 0
        while shared < min(path.count, previous.count, Int(UInt16.max)) && path[shared] == previous[shared] { shared += 1 }
        body.append(UInt16(shared))
        body.append(UInt16(path.count - shared))
        body.append(contentsOf: path[shared...])
        previous = path
        body.append(Self.kindCode(entry.kind))
        body.append(UInt16(entry.permissions & 0o7777))
        body.append(UInt64(entry.size))
        body.append(entry.modificationTime)
        body.append(entry.contentHash)
        switch entry.kind {
        case .symbolicLink:
            let target = Array((entry.linkTarget ?? "").utf8)
            body.append(UInt16(target.count))
            body.append(contentsOf: target)
        case .regular:
            body.append(UInt32(entry.blobs.count))
            for blob in entry.blobs {
                body.append(contentsOf: blob.digest.bytes)
                body.append(packIndex[blob.pack]!)
                body.append(blob.offset)
                body.append(blob.length)
            }
        default: break
        }
    }

    // MARK: Decoding

    /// How many bytes the header of the manifest starting with `prefix` (at least its
    /// first 12 bytes) takes: 160 for format 2, else 128 (a wrong format is refused by
    /// `decodeHeader`).
    static func headerLength(startingWith prefix: [UInt8]) -> Int {
        guard prefix.count >= 12 else { return headerSize }
        let format = UInt32(prefix[8]) | UInt32(prefix[9]) << 8 | UInt32(prefix[10]) << 16 | UInt32(prefix[11]) << 24
        return format == 2 ? mergeHeaderSize : headerSize
    }

    /// The summary in a manifest's header (the first 128 bytes, 160 for a merge's format
    /// 2), without the entries; `bodyOffset` is where its zlib stream starts.
    static func decodeHeader(_ bytes: [UInt8], id: SHA256Digest) throws(RemoteError) -> (
        summary: VersionSummary, packCount: Int, compressedSize: Int, bodySize: Int, bodyOffset: Int
    ) {
        func damaged(_ why: String) -> RemoteError {
            RemoteError(.verificationFailed, "version \(id.description.prefix(12)) is damaged: \(why)")
        }
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic else { throw damaged("not a version manifest") }
        do {
            return try bytes.withUnsafeBytes { raw throws -> (VersionSummary, Int, Int, Int, Int) in
                var reader = ByteReader(raw, offset: 8)
                let format = try reader.read(UInt32.self)
                guard format <= formatVersion else {
                    throw RemoteError(.notARemote, "version \(id.description.prefix(12)) has format \(format), newer than this pkgtool's")
                }
                guard format >= 1 else { throw damaged("its format is 0") }
                let flags = try reader.read(UInt32.self)
                let sequence = try reader.read(UInt64.self)
                let time = try reader.read(Int64.self)
                let root = try reader.hash()
                let size = try reader.read(UInt64.self)
                let entryCount = try reader.read(UInt64.self)
                let packCount = try reader.read(UInt64.self)
                let hasParent = try reader.read(UInt8.self)
                let reserved = try reader.bytes(7)
                let parentBytes = try reader.bytes(32)
                let compressed = try reader.read(UInt64.self)
                let body = try reader.read(UInt64.self)
                // Format 2: a merge's second parent, a real id that is not the first parent.
                var secondParent: SHA256Digest?
                if format == 2 {
                    let secondBytes = try reader.bytes(32)
                    guard hasParent == 1, !secondBytes.allSatisfy({ $0 == 0 }), secondBytes.elementsEqual(parentBytes) == false
                    else { throw damaged("its second parent is out of range") }
                    secondParent = SHA256Digest(bytes: secondBytes)
                }
                guard flags == 0, reserved.allSatisfy({ $0 == 0 }), sequence >= 1, sequence < 1 << 48, size < 1 << 62, entryCount < 1 << 32, packCount < 1 << 32,
                    hasParent <= 1, (hasParent == 1) == (sequence > 1), hasParent == 1 || parentBytes.allSatisfy({ $0 == 0 }),
                    compressed < 1 << 40,
                    body <= UInt64(maximumBodySize)
                else { throw damaged("its header is out of range") }
                guard body <= max(UInt64(inflationFloor), compressed * UInt64(maximumInflation)) else {
                    throw damaged("its entries would inflate \(body / max(compressed, 1))-fold, more than any version does")
                }
                let summary = VersionSummary(
                    id: id, sequence: Int(sequence), time: time,
                    parent: hasParent == 1 ? SHA256Digest(bytes: parentBytes) : nil, secondParent: secondParent,
                    rootHash: root, size: Int64(size), entryCount: Int(entryCount))
                return (summary, Int(packCount), Int(compressed), Int(body), format == 2 ? mergeHeaderSize : headerSize)
            }
        } catch let error as RemoteError {
            throw error
        } catch {
            throw damaged("its header is truncated")
        }
    }

    /// Decodes a whole manifest whose bytes were checked against `id`.
    ///
    /// A caller that wants only the tree decodes with `decodeTree` instead.
    static func decode(_ bytes: [UInt8], id: SHA256Digest) throws(RemoteError) -> VersionManifest {
        let (summary, packCount, bodySize, body, damaged) = try checkedBody(bytes, id: id)
        let entries = try decodeEntries(
            inflating: body, size: bodySize, count: summary.entryCount, packCount: packCount, damaged: damaged)
        try checkSize(of: entries.lazy.filter { $0.kind == .regular }.map(\.size), summary, damaged)
        let manifest = VersionManifest(
            sequence: summary.sequence, time: summary.time, parent: summary.parent, secondParent: summary.secondParent,
            rootHash: summary.rootHash, entries: entries)
        guard manifest.computedRootHash() == summary.rootHash else {
            throw damaged("its entries do not hash to the root it states")
        }
        return manifest
    }

    /// Decodes a manifest whose bytes were checked against `id` straight into the tree it
    /// describes (for a diff): every entry and blob is checked as `decode` checks them, but
    /// no blob is kept and no second array of entries is built, and siblings share their
    /// folder's path (`FolderInterner`).
    static func decodeTree(_ bytes: [UInt8], id: SHA256Digest) throws(RemoteError)
        -> (summary: VersionSummary, tree: TreeSnapshot)
    {
        let (summary, packCount, bodySize, body, damaged) = try checkedBody(bytes, id: id)
        var collector = TreeCollector()
        try streamTree(
            body: .bytes(body), compressedBytes: body.count, summary, packCount, bodySize, damaged, into: &collector, files: nil)
        return (summary, collector.tree(rootHash: summary.rootHash))
    }

    /// `decodeTree` into `sink`, which is handed each entry as it is decoded and checked
    /// (in stored order, its directories' hashes as each finishes). The version is trusted
    /// only when this returns: its total size and root hash are checked at the end, so
    /// `sink` must act on nothing it was handed before then.
    static func streamTree<Sink: TreeEntrySink>(
        _ bytes: [UInt8], id: SHA256Digest, into sink: inout Sink, files: FileHandoff<Sink>? = nil
    ) throws(RemoteError) -> VersionSummary {
        let (summary, packCount, bodySize, body, damaged) = try checkedBody(bytes, id: id)
        try streamTree(
            body: .bytes(body), compressedBytes: body.count, summary, packCount, bodySize, damaged, into: &sink, files: files)
        return summary
    }

    /// Hands a streamed tree's sink each regular file with its blobs, right after the sink
    /// entered it (the blobs are valid only during the call): what a pull gathers, without a
    /// second decode or an array of entries.
    typealias FileHandoff<Sink> = (inout Sink, RemoteEntry, ArraySlice<BlobLocation>) -> Void

    /// Streams the tree of a manifest body whose header said `summary`, `packCount` and
    /// `bodySize`: each entry checked by `forEachEntry`, its directories hashed as they
    /// finish (`MerkleStack`), then the files' total size and the root hash checked against
    /// the header's. `sink` reserves room for what `compressedBytes` can hold, not for what
    /// the header claims.
    private static func streamTree<Sink: TreeEntrySink>(
        body: CompressedBody, compressedBytes: Int, _ summary: VersionSummary, _ packCount: Int, _ bodySize: Int, _ damaged: Damage,
        into sink: inout Sink, files: FileHandoff<Sink>?
    ) throws(RemoteError) {
        sink.reserve(likelyCount(summary.entryCount, compressedBytes: compressedBytes))
        var merkle = MerkleStack()
        var total = SizeTotal()
        var blobs: [BlobLocation] = []
        try forEachEntry(
            inflating: body, size: bodySize, count: summary.entryCount, packCount: packCount, blobs: &blobs,
            keepingBlobs: false, damaged: damaged
        ) { entry, entryBlobs in
            if entry.kind == .regular { total.add(entry.size) }
            merkle.add(
                SnapshotEntry(
                    storedPath: entry.entryPath, kind: entry.kind, permissions: entry.permissions, size: entry.size,
                    hash: entry.contentHash, modificationTime: entry.modificationTime, linkTarget: entry.linkTarget),
                to: &sink)
            if entry.kind == .regular, let files { files(&sink, entry, entryBlobs) }
        }
        let root = merkle.finish(into: &sink)
        try total.check(summary, damaged)
        guard root == summary.rootHash else { throw damaged("its entries do not hash to the root it states") }
    }

    /// `decodeTree` of the manifest in `path` (the local cache's copy), read a piece at a time:
    /// its compressed body, as large as the tree at a million files, is never held whole.
    static func decodeTree(file path: String, id: SHA256Digest) throws -> (summary: VersionSummary, tree: TreeSnapshot) {
        var collector = TreeCollector()
        let summary = try streamTree(file: path, id: id, into: &collector)
        return (summary, collector.tree(rootHash: summary.rootHash))
    }

    /// `streamTree` of the manifest in `path`, read a piece at a time. Every byte read is
    /// hashed, and this returns only when the whole file's SHA-256 is `id` (until then it
    /// is decoded as the untrusted bytes it may be).
    static func streamTree<Sink: TreeEntrySink>(
        file path: String, id: SHA256Digest, into sink: inout Sink, files: FileHandoff<Sink>? = nil
    ) throws -> VersionSummary {
        let file = try FileDescriptor.open(path)
        let size = try file.status().size
        var prefix = [UInt8](repeating: 0, count: mergeHeaderSize)
        let read = try prefix.withUnsafeMutableBytes { try file.readFully(into: $0, at: 0) }
        let headerBytes = Array(prefix[..<min(read, headerLength(startingWith: Array(prefix[..<read])))])
        let (summary, packCount, compressedSize, bodySize, bodyOffset) = try decodeHeader(headerBytes, id: id)
        let damaged = Damage(shortID: summary.shortID)
        guard size == Int64(bodyOffset + compressedSize) else { throw damaged("its length does not match its header") }
        let pieces = FilePieces(file.rawValue, path: path, from: Int64(bodyOffset), to: size)
        pieces.hasher.update(headerBytes)
        try withExtendedLifetime(file) {
            try streamTree(
                body: .pieces(pieces.next), compressedBytes: compressedSize, summary, packCount, bodySize, damaged, into: &sink,
                files: files)
        }
        guard pieces.hasher.finish() == id else { throw damaged("it does not match its SHA-256") }
        return summary
    }

    /// A file's bytes from `start` to `end` in pieces of 256 KiB, each hashed as it is read.
    private final class FilePieces {
        let descriptor: Int32
        let path: String
        var position: Int64
        let end: Int64
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        let hasher = SHA256Hasher()

        init(_ descriptor: Int32, path: String, from start: Int64, to end: Int64) {
            self.descriptor = descriptor
            self.path = path
            position = start
            self.end = end
        }

        deinit { buffer.deallocate() }

        func next() throws -> UnsafeRawBufferPointer? {
            guard position < end else { return nil }
            let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[..<Int(min(Int64(buffer.count), end - position))])
            let count = try FileDescriptor.readFully(descriptor, path: path, into: wanted, at: position)
            guard count > 0 else { return nil }
            position += Int64(count)
            let piece = UnsafeRawBufferPointer(rebasing: buffer[..<count])
            hasher.update(piece)
            return piece
        }
    }

    /// Whether `bytes` decode, as a pull decodes them, to exactly this manifest: its summary
    /// and every entry, compared byte for byte as they inflate (a push's check of what it is
    /// about to store, without a second copy of its entries), and entries that hash to its root.
    func isEncoded(as bytes: [UInt8], id: SHA256Digest) -> Bool {
        computedRootHash() == rootHash && Self.decodesExactly(bytes, id: id, to: summary(id: id), entries: entries)
    }

    /// Whether `bytes` decode, as a pull decodes them, to the version `summary` describes
    /// with exactly `entries`, compared one by one as they inflate.
    static func decodesExactly(
        _ bytes: [UInt8], id: SHA256Digest, to expected: VersionSummary, entries: some Sequence<RemoteEntry>
    ) -> Bool {
        guard let (summary, packCount, bodySize, body, damaged) = try? Self.checkedBody(bytes, id: id),
            summary == expected
        else { return false }
        var remaining = entries.makeIterator()
        var same = true
        var blobs: [BlobLocation] = []
        do {
            try Self.forEachEntry(
                inflating: body, size: bodySize, count: summary.entryCount, packCount: packCount, blobs: &blobs,
                keepingBlobs: false, damaged: damaged
            ) { entry, entryBlobs in
                guard same, let written = remaining.next() else {
                    same = false
                    return
                }
                same = entry.isSame(as: written, blobs: entryBlobs)
            }
        } catch {
            return false
        }
        return same && remaining.next() == nil
    }

    /// The header of a manifest checked against its length: its summary, pack count, the
    /// size its body inflates to, and the compressed body.
    private static func checkedBody(_ bytes: [UInt8], id: SHA256Digest) throws(RemoteError) -> (
        summary: VersionSummary, packCount: Int, bodySize: Int, body: ArraySlice<UInt8>, damaged: Damage
    ) {
        let (summary, packCount, compressedSize, bodySize, bodyOffset) = try decodeHeader(bytes, id: id)
        let damaged = Damage(shortID: summary.shortID)
        guard bytes.count == bodyOffset + compressedSize else { throw damaged("its length does not match its header") }
        return (summary, packCount, bodySize, bytes[bodyOffset...], damaged)
    }

    /// Checks that the files' sizes add up to the size the header states.
    private static func checkSize(of fileSizes: some Sequence<Int64>, _ summary: VersionSummary, _ damaged: Damage)
        throws(RemoteError)
    {
        var total = SizeTotal()
        for size in fileSizes { total.add(size) }
        try total.check(summary, damaged)
    }

    /// The files' sizes added up as they are decoded; an overflow is refused at the end,
    /// where the total is checked against the header, as a whole list's would be.
    struct SizeTotal {
        private var total: Int64 = 0
        private var overflowed = false

        mutating func add(_ size: Int64) {
            let (sum, overflow) = total.addingReportingOverflow(size)
            overflowed = overflowed || overflow
            total = sum
        }

        func check(_ summary: VersionSummary, _ damaged: Damage) throws(RemoteError) {
            guard !overflowed else { throw damaged("its files add up beyond any size") }
            guard total == summary.size else { throw damaged("its files do not add up to the size it states") }
        }
    }

    /// Makes the error of a damaged manifest: `damaged("why")`.
    struct Damage {
        var shortID: String
        func callAsFunction(_ why: String) -> RemoteError {
            RemoteError(.verificationFailed, "version \(shortID) is damaged: \(why)")
        }
    }

    /// Decodes a body as it inflates from `compressed` (a zlib stream that must inflate to
    /// exactly `size` bytes) into entries whose blobs are slices of one array.
    static func decodeEntries(
        inflating compressed: ArraySlice<UInt8>, size: Int, count: Int, packCount: Int, damaged: Damage
    ) throws(RemoteError) -> [RemoteEntry] {
        let likely = likelyCount(count, compressedBytes: compressed.count)
        var entries: [RemoteEntry] = []
        entries.reserveCapacity(likely)
        // Every entry's blobs in one array, sliced once it is complete; where each entry's start.
        var blobs: [BlobLocation] = []
        blobs.reserveCapacity(likely)
        var blobStarts: [Int32] = []
        blobStarts.reserveCapacity(likely + 1)
        try forEachEntry(
            inflating: compressed, size: size, count: count, packCount: packCount, blobs: &blobs,
            keepingBlobs: true, damaged: damaged
        ) { entry, entryBlobs in
            blobStarts.append(Int32(entryBlobs.startIndex))
            entries.append(entry)
        }
        blobStarts.append(Int32(blobs.count))
        for index in entries.indices where blobStarts[index] < blobStarts[index + 1] {
            entries[index].blobs = blobs[Int(blobStarts[index])..<Int(blobStarts[index + 1])]
        }
        return entries
    }

    /// How many entries to reserve room for: what the compressed bytes that arrived can
    /// hold (a real entry takes dozens of them), not what a header claims.
    static func likelyCount(_ stated: Int, compressedBytes: Int) -> Int {
        min(stated, max(1 << 12, compressedBytes / 4))
    }

    /// Decodes a body as it inflates from `compressed` (a zlib stream that must inflate to
    /// exactly `size` bytes): the pack table, then `count` entries, each checked before
    /// use — its path safe and in strict order, its parent a directory entry of the very same
    /// bytes, its kind, permissions, size and blobs in range — and handed to `take` with its
    /// own blobs, a slice of `blobs` (appended there, and dropped after `take` unless
    /// `keepingBlobs`; `take` must not keep the slice). What needs the header — the total
    /// size, the root hash — is the caller's.
    ///
    /// The body is never held whole.
    private static func forEachEntry(
        inflating compressed: ArraySlice<UInt8>, size: Int, count: Int, packCount: Int, blobs: inout [BlobLocation],
        keepingBlobs: Bool, damaged: Damage,
        _ take: (RemoteEntry, _ blobs: ArraySlice<BlobLocation>) -> Void
    ) throws(RemoteError) {
        try forEachEntry(
            inflating: .bytes(compressed), size: size, count: count, packCount: packCount, blobs: &blobs,
            keepingBlobs: keepingBlobs, damaged: damaged, take)
    }

    /// Where a manifest's compressed body comes from: the bytes at hand, or pieces read in
    /// turn (a cached manifest read from its file, never held whole).
    enum CompressedBody {
        case bytes(ArraySlice<UInt8>)
        case pieces(() throws -> UnsafeRawBufferPointer?)
    }

    /// `forEachEntry` for a body from either source.
    private static func forEachEntry(
        inflating compressed: CompressedBody, size: Int, count: Int, packCount: Int, blobs: inout [BlobLocation],
        keepingBlobs: Bool, damaged: Damage,
        _ take: (RemoteEntry, _ blobs: ArraySlice<BlobLocation>) -> Void
    ) throws(RemoteError) {
        // Every record takes at least 39 bytes: a count beyond that is damage.
        guard count <= size / 39 else { throw damaged("it states more entries than it holds") }
        func inflating(_ body: (inout InflatingReader) throws -> Void) throws {
            switch compressed {
            case .bytes(let bytes): try Inflater.reading(bytes, size: size, framing: .zlib, body)
            case .pieces(let next): try Inflater.reading(pieces: next, size: size, framing: .zlib, body)
            }
        }
        do {
            try inflating { reader in
                guard packCount <= reader.remaining / 32 else { throw damaged("its pack table is truncated") }
                var packs: [PackName] = []
                packs.reserveCapacity(min(packCount, 1 << 12))
                for _ in 0..<packCount { packs.append(PackName(SHA256Digest(bytes: try reader.bytes(32)))) }
                var paths = EntryPathCheck(damaged: damaged)
                var folders = FolderInterner()
                for _ in 0..<count {
                    let path = try paths.next(&reader)
                    let firstBlob = blobs.count
                    var entry = try decodeEntry(path, &reader, packs: packs, blobs: &blobs, damaged: damaged)
                    entry.entryPath = folders.path(path)
                    if entry.kind == .directory { paths.addDirectory(path) }
                    take(entry, blobs[firstBlob...])
                    if !keepingBlobs { blobs.removeAll(keepingCapacity: true) }
                }
                guard reader.remaining == 0 else { throw damaged("it has bytes after its last entry") }
            }
        } catch let error as RemoteError {
            throw error
        } catch let error as InflateError {
            throw damaged("its entries do not inflate to the size its header states (\(error.reason))")
        } catch {
            throw damaged("its entries are truncated")
        }
    }

    /// Decodes an inflated body (the fuzzer's door to the same decoder: deflated again,
    /// then decoded as a manifest's body is).
    static func decodeEntries(
        _ body: [UInt8], count: Int, packCount: Int, damaged: Damage
    ) throws(RemoteError) -> [RemoteEntry] {
        try decodeEntries(
            inflating: Deflater.compressed(body, level: 1, framing: .zlib)[...], size: body.count, count: count,
            packCount: packCount, damaged: damaged)
    }

    /// The paths of a manifest's entries, read one after the other: each prefix-compressed
    /// against the one before, valid (`RemotePaths`), and making a tree (`TreeShapeCheck`:
    /// in strict depth-first order, beneath a directory entry that came before it, compared
    /// as bytes).
    struct EntryPathCheck {
        let damaged: Damage
        private var previous: [UInt8] = []
        private var shape = TreeShapeCheck()

        init(damaged: Damage) { self.damaged = damaged }

        mutating func next(_ reader: inout InflatingReader) throws -> String {
            let shared = Int(try reader.read(UInt16.self))
            let suffixLength = Int(try reader.read(UInt16.self))
            guard shared <= previous.count else { throw damaged("an entry's path is malformed") }
            let pathBytes = Array(previous[..<shared]) + Array(try reader.bytes(suffixLength))
            guard let path = RemotePaths.validated(pathBytes) else {
                throw damaged("an entry has an unsafe or malformed path")
            }
            switch shape.admit(path) {
            case .repeated?, .outOfOrder?: throw damaged("its entries are not in order ('\(path)')")
            case .noParentFolder?: throw damaged("'\(path)' has no parent directory entry")
            case nil: break
            }
            previous = pathBytes
            return path
        }

        mutating func addDirectory(_ path: String) { shape.admitFolder(path) }
    }

    /// Decodes the fields after an entry's path; a file's blobs go to the end of `blobs`.
    static func decodeEntry(
        _ path: String, _ reader: inout InflatingReader, packs: [PackName], blobs: inout [BlobLocation], damaged: Damage
    ) throws -> RemoteEntry {
        guard let kind = kind(try reader.read(UInt8.self)) else { throw damaged("'\(path)' has an unknown kind") }
        let permissions = UInt32(try reader.read(UInt16.self))
        guard permissions <= 0o7777 else { throw damaged("'\(path)' has out-of-range permissions") }
        let size = try reader.read(UInt64.self)
        guard size < 1 << 62 else { throw damaged("'\(path)' has an impossible size") }
        let modificationTime = try reader.read(Int64.self)
        let contentHash = try reader.hash()
        var entry = RemoteEntry(
            path: path, kind: kind, permissions: permissions, size: Int64(size),
            modificationTime: modificationTime, contentHash: contentHash, linkTarget: nil, blobs: [])
        switch kind {
        case .directory:
            guard size == 0 else { throw damaged("directory '\(path)' has a size") }
        case .symbolicLink:
            let count = Int(try reader.read(UInt16.self))
            let target = Array(try reader.bytes(count))
            guard !target.isEmpty, !target.contains(0), let text = String(validatingUTF8Bytes: target),
                target.count == Int(size)
            else { throw damaged("link '\(path)' has a malformed target") }
            // The root hash commits to the target only through this hash: it must be the
            // target's, or two trees would share a root.
            guard contentHash == ContentHash.of(target) else { throw damaged("link '\(path)' does not hash to its target") }
            entry.linkTarget = text
        default:
            try decodeBlobs(of: path, size: size, &reader, packs: packs, into: &blobs, damaged: damaged)
        }
        return entry
    }

    /// Appends a regular file's blobs to `blobs`: they must point inside the pack table and
    /// add up to `size`.
    static func decodeBlobs(
        of path: String, size: UInt64, _ reader: inout InflatingReader, packs: [PackName], into blobs: inout [BlobLocation],
        damaged: Damage
    ) throws {
        let blobCount = Int(try reader.read(UInt32.self))
        guard blobCount <= reader.remaining / 44 else { throw damaged("'\(path)' lists more blobs than it holds") }
        var sum: UInt64 = 0
        for _ in 0..<blobCount {
            let digest = SHA256Digest(bytes: try reader.bytes(32))
            let pack = Int(try reader.read(UInt32.self))
            let offset = try reader.read(UInt32.self)
            let length = try reader.read(UInt32.self)
            guard pack < packs.count, length > 0, UInt64(offset) + UInt64(length) <= UInt64(UInt32.max)
            else { throw damaged("a blob of '\(path)' points outside its pack table") }
            blobs.append(BlobLocation(digest: digest, packName: packs[pack], offset: offset, length: length))
            sum += UInt64(length)
        }
        guard sum == size else { throw damaged("the blobs of '\(path)' do not add up to its size") }
    }

    static func kindCode(_ kind: FileKind) -> UInt8 {
        switch kind {
        case .directory: return 2
        case .symbolicLink: return 3
        default: return 1
        }
    }

    static func kind(_ code: UInt8) -> FileKind? {
        switch code {
        case 1: return .regular
        case 2: return .directory
        case 3: return .symbolicLink
        default: return nil
        }
    }
}

/// The paths a version may hold: relative, "/"-separated, valid UTF-8, no empty, "." or ".."
/// component, no NUL: nothing a pull could write outside DEST.
enum RemotePaths {
    static func validated(_ bytes: [UInt8]) -> String? {
        guard !bytes.isEmpty, bytes.count <= 4096, !bytes.contains(0), let text = String(validatingUTF8Bytes: bytes)
        else { return nil }
        for component in bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if component.isEmpty || component.count > 255 { return nil }
            if component.elementsEqual([UInt8(ascii: ".")]) || component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) {
                return nil
            }
        }
        // The package's own metadata directory is never content.
        if bytes.split(separator: UInt8(ascii: "/")).first.map({ Array($0) }) == Array(PackageLayout.metadataDirectoryName.utf8) {
            return nil
        }
        return text
    }
}

extension String {
    /// The string these bytes encode as UTF-8, or nil when they are not valid UTF-8.
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}
