import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("Directory (Merkle) hashes")
struct TreeHashTests {
    /// Builds the same small tree, creating entries in the given order.
    func makeTree(at root: String, order: [Int]) throws {
        let steps: [() throws -> Void] = [
            { try Files.makeDirectory(root + "/pages") },
            { try Files.makeDirectory(root + "/media/empty") },
            { try Files.write(root + "/metadata.json", #"{"title":"t"}"#) },
            { try Files.write(root + "/run.sh", "#!/bin/sh\n", permissions: 0o755) },
            { try Files.symlink(root + "/latest", to: "pages/b.txt") },
            { try Files.write(root + "/Ünïcødé.txt", "ü") },
        ]
        let pageSteps: [() throws -> Void] = [
            { try Files.write(root + "/pages/a.txt", "A") },
            { try Files.write(root + "/pages/b.txt", "B") },
        ]
        for index in order { try steps[index]() }
        for step in (order.first! % 2 == 0 ? pageSteps : pageSteps.reversed()) { try step() }
    }

    func rootHash(_ path: String, workers: Int = 2) throws -> ContentHash {
        try TreeScanner(workers: workers).scan(path).snapshot.rootHash
    }

    @Test("equal trees built in different orders hash equal, on any number of workers")
    func orderIndependent() throws {
        let one = try TemporaryDirectory("tree-a")
        let two = try TemporaryDirectory("tree-b")
        try makeTree(at: one.path, order: [0, 1, 2, 3, 4, 5])
        try makeTree(at: two.path, order: [5, 3, 1, 4, 2, 0])
        let hash = try rootHash(one.path)
        #expect(try rootHash(two.path) == hash)
        #expect(try rootHash(two.path, workers: 1) == hash)
        #expect(try rootHash(one.path, workers: 8) == hash)
    }

    @Test("one byte, one name, one kind or an executable bit changes the hash")
    func sensitive() throws {
        let base = try TemporaryDirectory("tree-base")
        try makeTree(at: base.path, order: [0, 1, 2, 3, 4, 5])
        let original = try rootHash(base.path)

        let mutations: [(String, (String) throws -> Void)] = [
            ("one byte", { try Files.write($0 + "/pages/a.txt", "a") }),
            ("one name", { try FileSystem.rename($0 + "/pages/a.txt", to: $0 + "/pages/c.txt") }),
            ("file to symlink with the same text", {
                try FileSystem.remove($0 + "/pages/a.txt")
                try Files.symlink($0 + "/pages/a.txt", to: "A")
            }),
            ("empty file to empty directory", {
                try Files.write($0 + "/media/x", "")
                _ = $0
            }),
            ("executable bit", { try FileSystem.setPermissions($0 + "/run.sh", 0o644) }),
            ("symlink retargeted", {
                try FileSystem.remove($0 + "/latest")
                try Files.symlink($0 + "/latest", to: "pages/a.txt")
            }),
            ("empty directory added", { try Files.makeDirectory($0 + "/media/empty/more") }),
        ]
        var seen: Set<ContentHash> = [original]
        for (label, mutate) in mutations {
            let copy = try TemporaryDirectory("tree-mut")
            try makeTree(at: copy.path, order: [0, 1, 2, 3, 4, 5])
            #expect(try rootHash(copy.path) == original, "\(label): fresh copy")
            try mutate(copy.path)
            let changed = try rootHash(copy.path)
            #expect(changed != original, "\(label)")
            #expect(!seen.contains(changed), "\(label) collides with another mutation")
            seen.insert(changed)
        }
        // Directory modes and non-executable permission bits do not matter.
        let modes = try TemporaryDirectory("tree-mode")
        try makeTree(at: modes.path, order: [0, 1, 2, 3, 4, 5])
        try FileSystem.setPermissions(modes.path + "/pages", 0o700)
        try FileSystem.setPermissions(modes.path + "/metadata.json", 0o600)
        #expect(try rootHash(modes.path) == original)
    }

    @Test("a file, a directory and a link of the same name and bytes all differ")
    func kindsDiffer() throws {
        let asFile = try TemporaryDirectory("kind-f")
        let asDirectory = try TemporaryDirectory("kind-d")
        let asLink = try TemporaryDirectory("kind-l")
        let asEmptyFile = try TemporaryDirectory("kind-e")
        try Files.write(asFile.path + "/x", "t")
        try Files.makeDirectory(asDirectory.path + "/x")
        try Files.symlink(asLink.path + "/x", to: "t")
        try Files.write(asEmptyFile.path + "/x", "")
        let hashes = try [asFile, asDirectory, asLink, asEmptyFile].map { try rootHash($0.path) }
        #expect(Set(hashes).count == 4)
    }

    @Test("symlinks hash their target text and are never followed")
    func symlinksNotFollowed() throws {
        let one = try TemporaryDirectory("link-a")
        let two = try TemporaryDirectory("link-b")
        let outside = try TemporaryDirectory("link-outside")
        try Files.write(outside.path + "/target", "first")
        try Files.symlink(one.path + "/link", to: outside.path + "/target")
        try Files.symlink(two.path + "/link", to: outside.path + "/target")
        let before = try rootHash(one.path)
        #expect(try rootHash(two.path) == before)
        // Changing what the link points at does not change the tree: it was not followed.
        try Files.write(outside.path + "/target", "second, longer")
        #expect(try rootHash(one.path) == before)
        // A dangling link hashes fine, by its text.
        try FileSystem.remove(outside.path + "/target")
        #expect(try rootHash(one.path) == before)
        let snapshot = try TreeScanner().scan(one.path).snapshot
        #expect(snapshot.entries.first?.linkTarget == outside.path + "/target")
        #expect(snapshot.entries.first?.hash == ContentHash.of(Array((outside.path + "/target").utf8)))
        // A link to a directory is not descended into.
        try Files.makeDirectory(outside.path + "/dir")
        try Files.write(outside.path + "/dir/inner", "x")
        try Files.symlink(one.path + "/dirlink", to: outside.path + "/dir")
        let scanned = try TreeScanner().scan(one.path).snapshot
        #expect(scanned.entries.map(\.path) == ["dirlink", "link"])
    }

    @Test("the Merkle encoding matches Specs/hashing.md")
    func specifiedEncoding() throws {
        let root = try TemporaryDirectory("spec")
        try Files.write(root.path + "/b", "B")
        try Files.write(root.path + "/a", "A", permissions: 0o755)
        try Files.makeDirectory(root.path + "/d")
        var input = Array("pkgtool-tree-v1".utf8) + [0]
        input += [UInt8(ascii: "x")] + Array("a".utf8) + [0] + ContentHash.of(Array("A".utf8)).canonicalBytes
        input += [UInt8(ascii: "f")] + Array("b".utf8) + [0] + ContentHash.of(Array("B".utf8)).canonicalBytes
        let emptyDirectory = ContentHash.of(Array("pkgtool-tree-v1".utf8) + [0])
        input += [UInt8(ascii: "d")] + Array("d".utf8) + [0] + emptyDirectory.canonicalBytes
        #expect(try rootHash(root.path) == ContentHash.of(input))
        #expect(TreeHashBuilder.emptyDirectory == emptyDirectory)
    }

    @Test("FIFOs inside a tree are skipped and reported")
    func specialFilesSkipped() throws {
        let root = try TemporaryDirectory("fifo")
        try Files.write(root.path + "/a", "A")
        let withoutFIFO = try rootHash(root.path)
        #expect(mkfifo(root.path + "/pipe", 0o644) == 0)
        let result = try TreeScanner().scan(root.path)
        #expect(result.snapshot.rootHash == withoutFIFO)
        #expect(result.skipped.map(\.path) == ["pipe"])
        #expect(result.skipped.first?.kind == .fifo)
    }

    @Test("a flat directory of many files hashes the same on 1 and 4 workers")
    func manyFiles() throws {
        let root = try TemporaryDirectory("many")
        var generator = SeededBytes(seed: 3)
        for index in 0..<700 {
            try Files.write(root.path + "/f\(index)", generator.bytes(Int(generator.next() % 3000)))
        }
        let result = try TreeScanner(workers: 4).scan(root.path)
        #expect(result.filesHashed == 700)
        #expect(try rootHash(root.path, workers: 1) == result.snapshot.rootHash)
        #expect(TreeSnapshot.assemble(result.snapshot.entries.shuffled()).rootHash == result.snapshot.rootHash)
    }
}
