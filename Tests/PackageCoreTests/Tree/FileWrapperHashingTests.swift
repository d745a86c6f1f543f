import CSystemShims
import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// A tree that exercises every hashing rule: nesting, an executable, a link, an empty
/// directory, canonically equivalent names, a multi-chunk file and enough files to hash
/// on several workers.
func makeHashingTree(at root: String) throws {
    try makeSamplePackage(at: root)
    try Files.write(root + "/caf\u{E9}.txt", "precomposed")
    try Files.write(root + "/cafe\u{301}.txt", "decomposed")
    try Files.writeRandom(root + "/media/movie.bin", size: 3 << 20 | 12345, seed: 7)
    try Files.makeDirectory(root + "/many/deeper")
    for index in 0..<150 {
        try Files.write(root + "/many/\(index).txt", "file \(index)")
    }
    try Files.write(root + "/many/deeper/x", "x", permissions: 0o700)
}

@Suite("FileWrapper content hashes")
struct FileWrapperHashingTests {
    @Test("a tree read from disk hashes and snapshots exactly as TreeScanner scans it")
    func sameAsScanner() throws {
        let directory = try TemporaryDirectory("fw-hash")
        try makeHashingTree(at: directory.path)
        let scanned = try TreeScanner(workers: 2).scan(directory.path).snapshot
        for workers in [1, 2] {
            let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
            try package.hashFilesOnDisk(workers: workers)
            #expect(try package.contentHash == scanned.rootHash)
        }
        let snapshot = try FileWrapper(url: URL(fileURLWithPath: directory.path)).snapshot()
        #expect(snapshot.entries.count == scanned.entries.count)
        for (mine, theirs) in zip(snapshot.entries, scanned.entries) {
            #expect(mine == theirs, "\(mine.path)")
        }
        #expect(snapshot == scanned)
    }

    @Test("a tree built in memory hashes as the same tree written and scanned")
    func memoryTree() throws {
        let script = FileWrapper(regularFileWithContents: Data("#!/bin/sh\n".utf8))
        script.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o755]
        let root = FileWrapper(directoryWithFileWrappers: [
            "metadata.json": FileWrapper(regularFileWithContents: Data(#"{"title":"t"}"#.utf8)),
            "pages": FileWrapper(directoryWithFileWrappers: [
                "1.txt": FileWrapper(regularFileWithContents: Data("one".utf8)),
                "2.txt": FileWrapper(regularFileWithContents: Data("two".utf8)),
            ]),
            "media": FileWrapper(directoryWithFileWrappers: ["empty": FileWrapper(directoryWithFileWrappers: [:])]),
            "run.sh": script,
            "latest": FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "pages/2.txt")),
        ])
        let directory = try TemporaryDirectory("fw-hash-memory")
        try makeSamplePackage(at: directory.path)
        #expect(try root.contentHash == (try TreeScanner().scan(directory.path).snapshot.rootHash))
        let snapshot = try root.snapshot()
        #expect(snapshot.entries.map(\.path) == [
            "latest", "media", "media/empty", "metadata.json", "pages", "pages/1.txt", "pages/2.txt", "run.sh",
        ])
        #expect(snapshot.entries.first?.linkTarget == "pages/2.txt")
        #expect(snapshot.entries[1].descendantCount == 1 && snapshot.entries[4].descendantCount == 2)
        #expect(snapshot == TreeSnapshot.assemble(snapshot.entries))
    }

    @Test("a change below invalidates the cached hashes up to the root, and only those")
    func invalidation() throws {
        let directory = try TemporaryDirectory("fw-invalidate")
        try makeSamplePackage(at: directory.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
        let original = try package.contentHash
        let pages = try #require(package.fileWrappers?["pages"])
        let media = try #require(package.fileWrappers?["media"])
        let mediaHash = try media.contentHash

        let added = FileWrapper(regularFileWithContents: Data("three".utf8))
        added.preferredFilename = "3.txt"
        pages.addFileWrapper(added)
        #expect(package.knownContentHash == nil && pages.knownContentHash == nil)
        #expect(media.knownContentHash == mediaHash)
        try Files.write(directory.path + "/pages/3.txt", "three")
        #expect(try package.contentHash == (try TreeScanner().scan(directory.path).snapshot.rootHash))

        pages.removeFileWrapper(added)
        #expect(try package.contentHash == original)

        // The executable bit is part of the parent's record, not of the file's own hash.
        let page = try #require(pages.fileWrappers?["1.txt"])
        let pageHash = try page.contentHash
        page.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o744]
        #expect(page.knownContentHash == pageHash)
        #expect(try package.contentHash != original)
        page.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o600]
        #expect(try package.contentHash == original)

        // A rename changes the parent's hash; renaming back restores it.
        page.preferredFilename = "one.txt"
        #expect(try package.contentHash != original)
        page.preferredFilename = "1.txt"
        #expect(try package.contentHash == original)

        // A hash supplied from elsewhere (the manifest) is used, and the ancestors recomputed.
        page.knownContentHash = ContentHash.of(Array("not one".utf8))
        #expect(package.knownContentHash == nil)
        #expect(try package.contentHash != original)
    }

    @Test("opening a package with a 2 GiB file allocates well under 1 MiB for it; hashing streams it")
    func largeFile() throws {
        let directory = try TemporaryDirectory("fw-large")
        let path = directory.path + "/movie.bin"
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create])
        try file.truncate(to: 2 << 30)
        try file.close()
        try Files.write(directory.path + "/metadata.json", "{}")

        // The heap is the whole process's, and other tests run meanwhile: take the least of
        // three openings.
        var allocated = Int.max
        var opened: [FileWrapper] = []
        opened.reserveCapacity(3)
        for _ in 0..<3 {
            let before = pkg_heap_bytes_in_use()
            opened.append(try FileWrapper(url: URL(fileURLWithPath: directory.path)))
            let after = pkg_heap_bytes_in_use()
            allocated = min(allocated, after > before ? Int(after - before) : 0)
        }
        print("heap allocated opening a package with a 2 GiB file: \(allocated) bytes")
        #expect(allocated < 64 * 1024)

        let movie = try #require(opened.first?.fileWrappers?["movie.bin"])
        let hash = try movie.contentHash
        #expect(movie.contents == nil)
        #expect(hash == (try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer()).hash))

        // The chunked reader hands out 1 MiB at a time, never the whole file.
        var chunks = 0
        var largest = 0
        try movie.forEachChunk { chunk in
            chunks += 1
            largest = max(largest, chunk.count)
        }
        #expect(chunks == 2048 && largest == 1 << 20)
    }
}
