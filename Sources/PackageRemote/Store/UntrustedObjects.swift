import PackageCore

/// What a store serves — a HEAD record, a version manifest, a pack — decoded exactly as
/// push, pull and log decode it: the one door of the remote-objects fuzzer
/// (Fuzz/RemoteFuzzer) and its seeds. Nothing here is used by the commands.
package enum UntrustedRemoteObjects {
    static let location = RemoteLocation(bucket: "fuzz", prefix: "fuzz")

    /// Decodes `bytes` as a HEAD record: its head's sequence, nil when it is not one.
    /// - Throws: the refusal of a damaged or newer record.
    package static func headSequence(_ bytes: [UInt8]) throws -> Int? {
        try HeadRecord.decode(bytes, location: location)?.head.sequence
    }

    /// Indexes `bytes` as a whole pack (its trailer): the blobs' lengths, nil when refused.
    package static func packBlobLengths(_ bytes: [UInt8]) -> [Int]? {
        bytes.withUnsafeBytes { PackFormat.index(of: $0) }?.map(\.length)
    }

    /// Decodes `bytes` as a version manifest named by their SHA-256: its entries' count.
    /// - Throws: `RemoteError` when the manifest is refused.
    package static func versionEntryCount(_ bytes: [UInt8]) throws -> Int {
        try VersionManifest.decode(bytes, id: SHA256Digest.of(bytes)).entries.count
    }

    /// Decodes `bytes` as a diff and a pull read a version's tree (`VersionManifest.decodeTree`:
    /// the entry stream a diff compares as it goes, collected into a tree): its entries'
    /// count. It must accept exactly what `versionEntryCount` accepts.
    /// - Throws: `RemoteError` when the manifest is refused.
    package static func versionTreeEntryCount(_ bytes: [UInt8]) throws -> Int {
        try VersionManifest.decodeTree(bytes, id: SHA256Digest.of(bytes)).tree.entries.count
    }

    /// Decodes the manifest in the file at `path` as a diff decodes the cache's copy (a
    /// piece at a time), named by the SHA-256 of `bytes` (what the file should hold): its
    /// entries' count. For the file's own bytes it must accept exactly what
    /// `versionEntryCount` accepts.
    /// - Throws: `RemoteError` when the manifest is refused; the file system's errors.
    package static func versionTreeEntryCount(readingFile path: String, namedAs bytes: [UInt8]) throws -> Int {
        try VersionManifest.decodeTree(file: path, id: SHA256Digest.of(bytes)).tree.entries.count
    }

    /// Decodes `body` as the inflated body of a version manifest holding `entryCount` entries
    /// and `packCount` packs — what a hostile store can make a manifest say, since it can
    /// compute every hash and total a header states — and saves that tree into
    /// `destination` as a pull does (see `saveTree`).
    ///
    /// - Returns: the root hash `destination` holds if the save succeeded.
    /// - Throws: the decoder's refusal, or the engine's.
    package static func saveVersion(
        body: [UInt8], entryCount: Int, packCount: Int, to destination: String, strategy: SaveStrategy,
        maximumFileSize: Int
    ) throws -> ContentHash {
        let entries = try VersionManifest.decodeEntries(
            body, count: entryCount, packCount: packCount, damaged: VersionManifest.Damage(shortID: "fuzz"))
        return try saveTree(entries, to: destination, strategy: strategy, maximumFileSize: maximumFileSize)
    }

    /// Saves the tree of the version manifest `bytes` into `destination` as a pull does,
    /// once the manifest decodes (see `saveTree`).
    package static func saveVersion(
        _ bytes: [UInt8], to destination: String, strategy: SaveStrategy, maximumFileSize: Int
    ) throws -> ContentHash {
        let manifest = try VersionManifest.decode(bytes, id: SHA256Digest.of(bytes))
        return try saveTree(manifest.entries, to: destination, strategy: strategy, maximumFileSize: maximumFileSize)
    }

    /// Saves `entries` into `destination` as a pull does (`RemoteVersionSource`, then the
    /// engine). The shape of the tree is what is under test — paths, kinds, links,
    /// permissions — so each file's bytes are made up: `size` copies of one byte (at most
    /// `maximumFileSize`), with its hash and the tree's computed to match.
    static func saveTree(
        _ entries: [RemoteEntry], to destination: String, strategy: SaveStrategy, maximumFileSize: Int
    ) throws -> ContentHash {
        var manifest = VersionManifest(
            sequence: 1, time: 0, parent: nil, rootHash: ContentHash(high: 0, low: 0), entries: entries)
        var contents = PulledContents(readyDirectory: "/nonexistent/")
        for index in manifest.entries.indices where manifest.entries[index].kind == .regular {
            let size = min(Int(manifest.entries[index].size), maximumFileSize)
            let content = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
            let hash = ContentHash.of(content)
            manifest.entries[index].size = Int64(size)
            manifest.entries[index].contentHash = hash
            manifest.entries[index].blobs = []
            contents.origins[FileKey(hash, Int64(size))] = .bytes(content)
        }
        manifest.rootHash = manifest.computedRootHash()
        let source = RemoteVersionSource(manifest, contents: contents, rootPermissions: 0o755)
        _ = try PackageSaver.save(
            source, to: destination,
            options: SaveOptions(strategy: strategy, durability: .none, workers: 1, trustManifest: false))
        return manifest.rootHash
    }

    /// Well-formed objects of each kind, and the crafted version of the outside audit (a
    /// folder and a link whose names differ only in normalisation): the fuzzer's seeds.
    package static func samples() -> [(name: String, kind: UInt8, bytes: [UInt8])] {
        func entry(_ path: String, _ kind: FileKind, target: String? = nil, size: Int64 = 0) -> RemoteEntry {
            RemoteEntry(
                path: path, kind: kind, permissions: kind == .directory ? 0o755 : 0o644,
                size: kind == .symbolicLink ? Int64(target!.utf8.count) : size, modificationTime: 1_700_000_000,
                contentHash: kind == .symbolicLink ? ContentHash.of(Array(target!.utf8)) : ContentHash.empty,
                linkTarget: target,
                blobs: size > 0
                    ? [BlobLocation(digest: SHA256Digest.of([1]), pack: SHA256Digest.of([2]), offset: 0, length: UInt32(size))]
                    : [])
        }
        func version(_ entries: [RemoteEntry], sequence: Int = 1, merge: Bool = false) -> [UInt8] {
            var manifest = VersionManifest(
                sequence: sequence, time: 1, parent: sequence > 1 ? SHA256Digest.of([9]) : nil,
                secondParent: merge ? SHA256Digest.of([8]) : nil,
                rootHash: ContentHash(high: 0, low: 0), entries: entries.sorted { PathOrder.pathLess($0.path, $1.path) })
            manifest.rootHash = manifest.computedRootHash()
            return manifest.encoded()
        }
        let plain = version([
            entry("metadata.json", .regular, size: 12), entry("pages", .directory), entry("pages/1.json", .regular, size: 3),
            entry("pages/link", .symbolicLink, target: "1.json"), entry("empty", .directory), entry("e", .regular),
        ])
        let twins = version([
            entry("e\u{301}", .directory), entry("\u{e9}", .symbolicLink, target: "/tmp/pkgtool-fuzz-canary"),
            entry("\u{e9}/.ssh", .directory), entry("\u{e9}/.ssh/authorized_keys", .regular, size: 4),
        ], sequence: 2)
        // A merge (format 2: a second parent after the fixed header).
        let merge = version([entry("pages", .directory), entry("pages/1.json", .regular, size: 3)], sequence: 3, merge: true)
        let summary = VersionSummary(
            id: SHA256Digest.of(plain), sequence: 1, time: 1, parent: nil, rootHash: ContentHash.empty, size: 15,
            entryCount: 6)
        let head = HeadRecord(head: summary, history: []).encoded()
        let mergeSummary = VersionSummary(
            id: SHA256Digest.of(merge), sequence: 2, time: 2, parent: summary.id, secondParent: SHA256Digest.of([8]),
            rootHash: ContentHash.empty, size: 3, entryCount: 2)
        let mergeHead = HeadRecord(head: mergeSummary, history: [summary]).encoded()
        let pack = [UInt8](repeating: 7, count: 5) + PackFormat.trailer([(SHA256Digest.of([UInt8](repeating: 7, count: 5)), 5)])
        // The same trees as bodies: [pack count u8, entry count u16 LE] then the inflated body.
        func body(_ object: [UInt8]) -> [UInt8] {
            guard let header = try? VersionManifest.decodeHeader(Array(object.prefix(VersionManifest.mergeHeaderSize)), id: SHA256Digest.of(object)),
                let inflated = try? Inflater.inflated(object[header.bodyOffset...], size: header.bodySize, framing: .zlib)
            else { return [] }
            let count = header.summary.entryCount
            return [UInt8(header.packCount), UInt8(count & 0xFF), UInt8(count >> 8)] + inflated
        }
        return [
            ("head", 0, head), ("merge-head", 0, mergeHead), ("pack", 1, pack), ("version", 2, plain), ("twins", 2, twins),
            ("merge", 2, merge), ("merge-body", 3, body(merge)),
            ("body", 3, body(plain)), ("twins-body", 3, body(twins)),
        ]
    }
}
