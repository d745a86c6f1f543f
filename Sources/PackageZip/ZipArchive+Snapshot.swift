import PackageCore

extension ZipArchive {
    /// The archive as a `TreeSnapshot`, the currency `diff` compares.
    ///
    /// Files and links carry our XXH3-128 content hash when the archive has the 0x6870
    /// field (pkgtool writes it). For entries without it, `computingMissingHashes` reads and
    /// hashes their data (checked as `verify` does); otherwise their hash is
    /// `ContentHash.empty` and `hasAllHashes` is false: compare such entries by
    /// `ZipEntry.crc32` and `uncompressedSize` instead. Directories implied by deeper
    /// entries are added; directory hashes are the Merkle hashes of Specs/hashing.md.
    ///
    /// - Complexity: O(n log n) in the entries (and implied directories, from the archive's
    ///   `PathTree`) without reading data; with
    ///   `computingMissingHashes`, one read of each entry that lacks a hash.
    public func snapshot(computingMissingHashes: Bool = false) throws -> TreeSnapshot {
        var result: [SnapshotEntry] = []
        result.reserveCapacity(entries.count)
        let reader = EntryReader()
        for entry in entries {
            var hash = entry.contentHash
            if entry.kind == .symbolicLink, let target = entry.linkTarget {
                hash = ContentHash.of(Array(target.utf8))
            } else if hash == nil && entry.kind == .regular && computingMissingHashes {
                let hasher = ContentHasher()
                try reader.read(entry, file: file, archivePath: path) { hasher.update($0) }
                hash = hasher.digest()
            }
            result.append(entry.snapshotEntry(hash: hash))
        }
        for node in tree.impliedDirectories {
            result.append(
                SnapshotEntry(path: tree.path(of: node).string, kind: .directory, permissions: 0o755, size: 0, hash: .empty))
        }
        return TreeSnapshot.assemble(result)
    }

    /// Whether every file and link carries our content hash, so that `snapshot()` is exact
    /// without reading data.
    public var hasAllHashes: Bool {
        entries.allSatisfy { $0.kind != .regular || $0.contentHash != nil }
    }
}
