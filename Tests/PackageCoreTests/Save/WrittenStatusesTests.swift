import PackageTestSupport
import Testing

@testable import PackageCore

/// The statuses a save wrote, kept as compact records beside the new tree's entries, read
/// back exactly as stored.
@Suite("WrittenStatuses")
struct WrittenStatusesTests {
    /// A tree of a directory, two files and a link, made on disk so that their statuses are
    /// real ones; returns the tree and the status of each entry by index.
    func realTree(in directory: TemporaryDirectory) throws -> (TreeSnapshot, [FileStatus]) {
        let tree = Snapshots.make([
            ("d", .directory), ("d/a.txt", .file("alpha")), ("d/run.sh", .file("run", executable: true)),
            ("link", .link("d/a.txt")),
        ])
        try Files.makeDirectory(directory.url("d"))
        try Files.write(directory.url("d/a.txt"), Array("alpha".utf8), permissions: 0o644)
        try Files.write(directory.url("d/run.sh"), Array("run".utf8), permissions: 0o755)
        try FileSystem.makeSymbolicLink(directory.url("link"), target: "d/a.txt")
        let statuses = try tree.entries.map { try fileStatus(atPath: directory.url($0.path)) }
        return (tree, statuses)
    }

    @Test("real statuses read back equal, whether kept densely or sparsely", arguments: [true, false])
    func roundTrip(dense: Bool) throws {
        let directory = try TemporaryDirectory("written-statuses")
        let (tree, statuses) = try realTree(in: directory)
        var written = WrittenStatuses(entries: tree.entries, expectedWrites: dense ? tree.entries.count : 0)
        for index in 1..<tree.entries.count { written[index] = statuses[index] }
        #expect(written[0] == nil)
        for index in 1..<tree.entries.count { #expect(written[index] == statuses[index]) }
        var seen: [Int: FileStatus] = [:]
        written.forEach { index, status in seen[index] = status }
        #expect(seen == Dictionary(uniqueKeysWithValues: (1..<tree.entries.count).map { ($0, statuses[$0]) }))
    }

    @Test("statuses a record cannot hold: another size, kind or mode than the entry's, a wide device or link count")
    func statusesBeyondTheRecord() throws {
        let directory = try TemporaryDirectory("written-statuses")
        let (tree, statuses) = try realTree(in: directory)
        let file = 1
        var wideDevice = statuses[file]
        wideDevice.device = 1 << 40 | 0x1234
        var wideLinks = statuses[file]
        wideLinks.linkCount = 1 << 33
        var otherSize = statuses[file]
        otherSize.size += 1
        var otherMode = statuses[file]
        otherMode.permissions = 0o2644
        var otherKind = statuses[file]
        otherKind.kind = .symbolicLink
        var extremes = statuses[file]
        extremes.device = UInt64(UInt32.max)
        extremes.linkCount = UInt64(UInt32.max)
        extremes.userID = .max
        extremes.groupID = .max
        extremes.inode = .max
        extremes.modificationTime = .min
        extremes.changeTime = .max
        var written = WrittenStatuses(entries: tree.entries, expectedWrites: tree.entries.count)
        for status in [wideDevice, wideLinks, otherSize, otherMode, otherKind, extremes, statuses[file], wideDevice] {
            written[file] = status
            #expect(written[file] == status)
            var count = 0
            written.forEach { index, seen in
                count += 1
                #expect(index == file && seen == status)
            }
            #expect(count == 1)
        }
        written[file] = nil
        #expect(written[file] == nil)
    }

    @Test("a save's statuses are held as records: times set by the engine, a link's own, one owner and device")
    func usualStatusesAreRecords() throws {
        let directory = try TemporaryDirectory("written-statuses")
        var (tree, statuses) = try realTree(in: directory)
        // The engine sets each file's modification time to its entry's; a link keeps its own.
        for index in [1, 2] { tree.entries[index].modificationTime = statuses[index].modificationTime }
        var written = WrittenStatuses(entries: tree.entries, expectedWrites: tree.entries.count)
        for index in 1..<tree.entries.count { written[index] = statuses[index] }
        #expect(statuses[3].modificationTime == statuses[3].changeTime)
        #expect(written.exactCount == 0)
        for index in 1..<tree.entries.count { #expect(written[index] == statuses[index]) }
        // Far from the first status (beyond 48 bits of change time or inode), or another
        // owner: kept whole, and read back as given.
        var far = statuses[2]
        far.changeTime = statuses[1].changeTime + (1 << 47)
        var farInode = statuses[2]
        farInode.inode = statuses[1].inode &- (1 << 47) &- 1
        var owner = statuses[2]
        owner.userID &+= 1
        var near = statuses[2]
        near.changeTime = statuses[1].changeTime - (1 << 47)
        near.inode = statuses[1].inode &+ (1 << 47) &- 1
        for (status, isRecord) in [(far, false), (farInode, false), (owner, false), (near, true), (statuses[2], true)] {
            written[2] = status
            #expect(written[2] == status)
            #expect(written.exactCount == (isRecord ? 0 : 1))
        }
    }

    @Test("WrittenFiles finds a status by path and lists every one")
    func writtenFilesByPath() throws {
        let directory = try TemporaryDirectory("written-statuses")
        let (tree, statuses) = try realTree(in: directory)
        var written = WrittenStatuses(entries: tree.entries, expectedWrites: tree.entries.count)
        written[2] = statuses[2]
        written[3] = statuses[3]
        let files = WrittenFiles(entries: tree.entries, statuses: written)
        #expect(files.status(at: RelativePath(trusted: tree.entries[2].path)) == statuses[2])
        #expect(files.status(at: RelativePath(trusted: tree.entries[1].path)) == nil)
        #expect(
            files.dictionary == [
                RelativePath(trusted: tree.entries[2].path): statuses[2], RelativePath(trusted: tree.entries[3].path): statuses[3],
            ])
    }
}
