import Testing

@testable import PackageCore

/// `SnapshotEntry`'s compact form: every public field reads back what was written, equal
/// entries compare equal however they were built, and the stored size stays within the
/// budget a million-file package relies on (Specs/manifest.md, "Memory").
@Suite struct CompactEntryTests {
    private func file(_ path: String = "pages/page-0001.json") -> SnapshotEntry {
        SnapshotEntry(
            path: path, kind: .regular, permissions: 0o644, size: 42, hash: ContentHash(high: 1, low: 2),
            modificationTime: 1_700_000_000_123_456_789, changeTime: 1_700_000_001_000_000_000, inode: 12345,
            device: 2049)
    }

    @Test func storedSizeStaysWithinBudget() {
        #expect(MemoryLayout<SnapshotEntry>.stride <= 120)
    }

    @Test func everyFieldReadsBack() {
        let wide: UInt64 = 0x1_0000_0003
        let stamp = SourceStamp(device: wide, inode: 7, modificationTime: -5, changeTime: 9)
        let chunks = ChunkList([FileChunk(offset: 0, length: 42, hash: ContentHash(high: 3, low: 4))])
        let entry = SnapshotEntry(
            path: "a/b", kind: .symbolicLink, permissions: 0o7777, size: 3, hash: ContentHash(high: 5, low: 6),
            modificationTime: -1, changeTime: -2, inode: .max, device: wide, descendantCount: 77, linkTarget: "../c",
            source: stamp, chunks: chunks)
        #expect(entry.path == "a/b")
        #expect(entry.kind == .symbolicLink)
        #expect(entry.permissions == 0o7777)
        #expect(entry.size == 3)
        #expect(entry.modificationTime == -1)
        #expect(entry.changeTime == -2)
        #expect(entry.inode == .max)
        #expect(entry.device == wide)
        #expect(entry.descendantCount == 77)
        #expect(entry.linkTarget == "../c")
        #expect(entry.source == stamp)
        #expect(entry.chunks == chunks)
    }

    @Test func setterChangesOnlyItsField() {
        var entry = file()
        entry.device = .max
        #expect(entry.device == .max)
        entry.source = SourceStamp(device: 1, inode: 2, modificationTime: 3, changeTime: 4)
        #expect(entry.source == SourceStamp(device: 1, inode: 2, modificationTime: 3, changeTime: 4))
        #expect(entry.device == .max)
        entry.device = 2049
        entry.source = SourceStamp(device: .max, inode: 2, modificationTime: 3, changeTime: 4)
        #expect(entry.source?.device == .max)
        #expect(entry.device == 2049)
        entry.linkTarget = "x"
        entry.linkTarget = nil
        #expect(entry.linkTarget == nil)
        #expect(entry.source?.device == .max)
    }

    @Test func equalEntriesCompareEqualHoweverBuilt() {
        var changed = file()
        changed.device = .max
        changed.linkTarget = "t"
        changed.source = SourceStamp(device: .max, inode: 1, modificationTime: 1, changeTime: 1)
        changed.chunks = ChunkList([FileChunk(offset: 0, length: 42, hash: ContentHash(high: 0, low: 1))])
        // Undone field by field: the entry is the plain one again, in == and in hashing.
        changed.device = 2049
        changed.linkTarget = nil
        changed.source = nil
        changed.chunks = nil
        #expect(changed == file())
        #expect(Set([changed, file()]).count == 1)
        var other = file()
        other.source = SourceStamp(device: 0, inode: 0, modificationTime: 0, changeTime: 0)
        #expect(other != file(), "an all-zero stamp is a stamp, not its absence")
    }

    @Test func indexLengthIsExact() {
        var entries: [SnapshotEntry] = []
        for index in 0..<50 {
            var entry = file("pages/chapter-\(index / 10)/page-\(index).json")
            if index % 7 == 0 { entry.source = SourceStamp(device: 1, inode: UInt64(index), modificationTime: 1, changeTime: 2) }
            entries.append(entry)
        }
        entries.append(
            SnapshotEntry(
                path: "zlink", kind: .symbolicLink, permissions: 0o777, size: 5, hash: .empty, linkTarget: "pages"))
        let snapshot = TreeSnapshot.assemble(entries)
        let bytes = ManifestFormat.encodeIndex(snapshot)
        let header = ManifestFormat.encodeIndex(.empty).count
        #expect(bytes.count == header + ManifestFormat.encodedLength(of: snapshot.entries))
    }
}
