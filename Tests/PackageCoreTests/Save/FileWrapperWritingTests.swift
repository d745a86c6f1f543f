import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("FileWrapper writes")
struct FileWrapperWritingTests {
    func names(in path: String) throws -> [String] {
        try DirectoryListing.names(in: FileDescriptor.openDirectory(path)).sorted()
    }

    @Test("a tree read from disk, written elsewhere, scans to the same hash; big files are copied, not loaded")
    func copyTree() throws {
        let source = try TemporaryDirectory("fw-write-src")
        try makeHashingTree(at: source.path)
        let target = try TemporaryDirectory("fw-write-dst")
        let package = try FileWrapper(url: URL(fileURLWithPath: source.path))
        let destination = target.path + "/Copy.pkg"
        try package.write(to: URL(fileURLWithPath: destination), originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        #expect(try PackageScan.scan(destination, useManifest: false).snapshot.rootHash == (try package.contentHash))
        #expect(package.fileWrappers?["media"]?.fileWrappers?["movie.bin"]?.contents == nil)
        // Modes and dates come along.
        let script = try FileSystem.status(destination + "/run.sh")
        #expect(script.permissions == 0o755)
        let original = try FileSystem.status(source.path + "/pages/1.txt")
        #expect(try FileSystem.status(destination + "/pages/1.txt").modificationTime == original.modificationTime)
        #expect(try names(in: target.path) == ["Copy.pkg"])
    }

    @Test("writing over an existing package swaps it in whole and leaves nothing behind")
    func replace() throws {
        let target = try TemporaryDirectory("fw-replace")
        let destination = target.path + "/Doc.pkg"
        try Files.makeDirectory(destination)
        try makeSamplePackage(at: destination)
        try Files.write(destination + "/stale.txt", "old")
        let fresh = FileWrapper(directoryWithFileWrappers: [
            "metadata.json": FileWrapper(regularFileWithContents: Data("{}".utf8))
        ])
        try fresh.write(to: URL(fileURLWithPath: destination), options: .atomic, originalContentsURL: nil)
        #expect(try names(in: destination) == [".pkgtool", "metadata.json"])
        #expect(try names(in: target.path) == ["Doc.pkg"])
        #expect(try Files.read(destination + "/metadata.json") == Array("{}".utf8))
    }

    @Test("flat files and links are written too")
    func flatFile() throws {
        let target = try TemporaryDirectory("fw-flat")
        let text = FileWrapper(regularFileWithContents: Data("hello".utf8))
        try text.write(to: URL(fileURLWithPath: target.path + "/a.txt"), originalContentsURL: nil)
        #expect(try Files.read(target.path + "/a.txt") == Array("hello".utf8))
        try FileWrapper(regularFileWithContents: Data("again".utf8))
            .write(to: URL(fileURLWithPath: target.path + "/a.txt"), originalContentsURL: nil)
        #expect(try Files.read(target.path + "/a.txt") == Array("again".utf8))
        let link = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "a.txt"))
        try link.write(to: URL(fileURLWithPath: target.path + "/b"), originalContentsURL: nil)
        #expect(try FileSystem.readSymbolicLink(target.path + "/b") == "a.txt")
        #expect(try names(in: target.path) == ["a.txt", "b"])
    }

    @Test(".withNameUpdating names every node and points files at what was written")
    func nameUpdating() throws {
        let target = try TemporaryDirectory("fw-names")
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let first = FileWrapper(regularFileWithContents: Data("1".utf8))
        first.preferredFilename = "page.txt"
        let second = FileWrapper(regularFileWithContents: Data("2".utf8))
        second.preferredFilename = "page.txt"
        directory.addFileWrapper(first)
        directory.addFileWrapper(second)
        let destination = target.path + "/Named.pkg"
        try directory.write(
            to: URL(fileURLWithPath: destination), options: .withNameUpdating, originalContentsURL: nil,
            saveOptions: SaveOptions(durability: .none))
        #expect(directory.filename == "Named.pkg")
        #expect(first.filename == "page.txt" && second.filename == "2 - page.txt")
        #expect(second.backingFile?.path == destination + "/2 - page.txt")
        #expect(second.backingFile?.status.size == 1)
        #expect(!directory.needsToBeUpdated(from: URL(fileURLWithPath: destination)))
        #expect(directory.matchesContents(of: URL(fileURLWithPath: destination)))
        // Written back in place (the journaled edited-parts path): a new child and a
        // renamed one take the names they were written under.
        let third = FileWrapper(regularFileWithContents: Data("3".utf8))
        third.preferredFilename = "new.txt"
        directory.addFileWrapper(third)
        second.preferredFilename = "renamed.txt"
        let url = URL(fileURLWithPath: destination)
        try directory.write(to: url, options: .withNameUpdating, originalContentsURL: url, saveOptions: SaveOptions(durability: .none))
        #expect(third.filename == "new.txt" && second.filename == "renamed.txt", "\(third.filename ?? "nil") \(second.filename ?? "nil")")
        #expect(third.fileAttributes[FileAttributeKey.modificationDate.rawValue] != nil)
        #expect(!directory.needsToBeUpdated(from: url))
        // Without the option, names stay as they were.
        let other = FileWrapper(regularFileWithContents: Data())
        try other.write(to: URL(fileURLWithPath: target.path + "/x"), originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        #expect(other.filename == nil)
    }

    @Test("a write that fails midway leaves the previous version and no temporary files")
    func failedWrite() throws {
        let target = try TemporaryDirectory("fw-fail")
        let destination = target.path + "/Doc.pkg"
        try Files.makeDirectory(destination)
        try makeSamplePackage(at: destination)
        let before = try PackageScan.scan(destination, useManifest: false).snapshot.rootHash
        let replacement = FileWrapper(directoryWithFileWrappers: [
            "a.txt": FileWrapper(regularFileWithContents: Data("a".utf8)),
            "b.txt": FileWrapper(regularFileWithContents: Data("b".utf8)),
        ])
        for step in [IOStep.write, .sync, .create, .rename] {
            let fault = FailingStep(step, pathFragment: "", fault: .error(.noSpace))
            #expect(throws: FileSystemError.self, "\(step)") {
                try IOFaultInjection.withInjector(fault) {
                    try replacement.write(to: URL(fileURLWithPath: destination), originalContentsURL: nil)
                }
            }
            #expect(try PackageScan.scan(destination, useManifest: false).snapshot.rootHash == before, "\(step)")
            #expect(try names(in: target.path) == ["Doc.pkg"], "\(step)")
            // The failed save removed what it had written (no temporaries left to the next command).
            let temporaries = destination + "/.pkgtool/tmp"
            if try FileSystem.statusIfExists(temporaries) != nil { #expect(try names(in: temporaries) == [], "\(step)") }
        }
    }

    @Test("a file that vanished before the write is reported with its path, and nothing is written")
    func vanishedDuringWrite() throws {
        let source = try TemporaryDirectory("fw-vanish-src")
        try makeSamplePackage(at: source.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: source.path))
        try FileSystem.remove(source.path + "/pages/2.txt")
        let target = try TemporaryDirectory("fw-vanish-dst")
        do {
            try package.write(to: URL(fileURLWithPath: target.path + "/Out.pkg"), originalContentsURL: nil)
            Issue.record("writing a package with a removed page succeeded")
        } catch let error as FileSystemError {
            #expect(error.path == source.path + "/pages/2.txt")
            #expect(error.errno == .noSuchFileOrDirectory)
        }
        #expect(try names(in: target.path).isEmpty)
    }
}

@Suite("FileWrapper writes through the save engine")
struct FileWrapperIncrementalWriteTests {
    func inode(_ path: String) throws -> UInt64 { try FileSystem.status(path).inode }

    @Test("writing a package over itself writes only the changed file, and a second write nothing")
    func incremental() throws {
        let directory = try TemporaryDirectory("fw-incremental")
        let path = directory.path + "/Doc.pkg"
        try Files.makeDirectory(path)
        try makeHashingTree(at: path)
        let url = URL(fileURLWithPath: path)
        let package = try FileWrapper(url: url)
        let untouched = try inode(path + "/media/movie.bin")
        let pages = try #require(package.fileWrappers?["pages"])
        pages.removeFileWrapper(try #require(pages.fileWrappers?["1.txt"]))
        pages.addRegularFile(withContents: Data("ONE, edited".utf8), preferredFilename: "1.txt")

        let statistics = try package.write(
            to: url, options: [.atomic, .withNameUpdating], originalContentsURL: url, saveOptions: SaveOptions(durability: .none)
        ).statistics
        #expect(statistics.filesWritten == 1)
        #expect(statistics.bytesWritten == Int64("ONE, edited".utf8.count))
        #expect(try Files.read(path + "/pages/1.txt") == Array("ONE, edited".utf8))
        #expect(try inode(path + "/media/movie.bin") == untouched)
        #expect(try TreeScanner(excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(path).snapshot.rootHash
            == (try package.contentHash))

        let again = try package.write(
            to: url, options: [.atomic, .withNameUpdating], originalContentsURL: url, saveOptions: SaveOptions(durability: .none)
        ).statistics
        #expect(again.filesWritten == 0 && again.bytesWritten == 0)

        // A file read from disk and renamed is taken from where it was, not from memory.
        let media = try #require(package.fileWrappers?["media"])
        try #require(media.fileWrappers?["movie.bin"]).preferredFilename = "film.bin"
        let renamed = try package.write(
            to: url, options: [.withNameUpdating], originalContentsURL: url, saveOptions: SaveOptions(durability: .none)
        ).statistics
        #expect(renamed.filesWritten == 1)
        #expect(try FileSystem.statusIfExists(path + "/media/movie.bin") == nil)
        #expect(try FileSystem.status(path + "/media/film.bin").size == 3 << 20 | 12345)
    }

    @Test("writing elsewhere goes through the save engine: a package with its manifest, whose next save in place is incremental")
    func newLocationThroughEngine() throws {
        let directory = try TemporaryDirectory("fw-not-in-place")
        let path = directory.path + "/Doc.pkg"
        try Files.makeDirectory(path)
        try makeSamplePackage(at: path)
        let package = try FileWrapper(url: URL(fileURLWithPath: path))
        let copyPath = directory.path + "/Copy.pkg"
        let copy = try package.write(
            to: URL(fileURLWithPath: copyPath), originalContentsURL: URL(fileURLWithPath: path),
            saveOptions: SaveOptions(durability: .none)
        ).statistics
        #expect(copy.filesWritten == 4 && copy.symbolicLinksWritten == 1)
        // The copy has its manifest: a fresh tree of it saves back with nothing to write.
        let manifest = try #require(try PackageManifest.load(packagePath: copyPath))
        #expect(manifest.snapshot.rootHash == (try package.contentHash))
        let reread = try FileWrapper(url: URL(fileURLWithPath: copyPath))
        let again = try reread.write(
            to: URL(fileURLWithPath: copyPath), originalContentsURL: URL(fileURLWithPath: copyPath),
            saveOptions: SaveOptions(durability: .none)
        ).statistics
        #expect(again.unchanged && again.filesWritten == 0 && again.filesHashed == 0)
        // Over the package itself without original contents: compared, nothing to write.
        let over = try package.write(to: URL(fileURLWithPath: path), originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
            .statistics
        #expect(over.filesWritten == 0)
    }

    @Test("without options, a folder with files that is no package is refused, as Apple refuses an existing item; .atomic replaces it")
    func foreignFolderRefused() throws {
        let directory = try TemporaryDirectory("fw-foreign")
        let folder = directory.path + "/Documents"
        try Files.makeDirectory(folder)
        try Files.write(folder + "/letter.txt", "keep me")
        let tree = FileWrapper(directoryWithFileWrappers: ["a.txt": FileWrapper(regularFileWithContents: Data("a".utf8))])
        let url = URL(fileURLWithPath: folder)
        #expect {
            try tree.write(to: url, originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        } throws: { error in
            (error as? FileSystemError)?.errno == .fileExists
        }
        #expect(try Files.read(folder + "/letter.txt") == Array("keep me".utf8))
        // Nor is an empty .pkgtool, or a manifest copied from another package, enough to
        // make it a package: the manifest must name this folder.
        try Files.makeDirectory(folder + "/.pkgtool")
        #expect {
            try tree.write(to: url, originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        } throws: { error in
            (error as? FileSystemError)?.errno == .fileExists
        }
        let other = directory.path + "/Other.pkg"
        try tree.write(to: URL(fileURLWithPath: other), originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        try FileManager.default.removeItem(atPath: folder + "/.pkgtool")
        try FileManager.default.copyItem(atPath: other + "/.pkgtool", toPath: folder + "/.pkgtool")
        #expect {
            try tree.write(to: url, originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        } throws: { error in
            (error as? FileSystemError)?.errno == .fileExists
        }
        #expect(try Files.read(folder + "/letter.txt") == Array("keep me".utf8))
        // An empty folder, or one given with .atomic, is written.
        try tree.write(to: url, options: .atomic, originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
        #expect(try FileSystem.statusIfExists(folder + "/letter.txt") == nil)
        try Files.makeDirectory(directory.path + "/Empty")
        try tree.write(to: URL(fileURLWithPath: directory.path + "/Empty"), originalContentsURL: nil, saveOptions: SaveOptions(durability: .none))
    }
}
