import Foundation
import Glibc
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageCore

/// Counts the I/O steps taken, by kind, so a test can assert what did not happen.
/// Makes a small package: metadata, pages, an executable, a link, an empty directory.
func makeSamplePackage(at root: String) throws {
    try Files.makeDirectory(root + "/pages")
    try Files.makeDirectory(root + "/media/empty")
    try Files.write(root + "/metadata.json", #"{"title":"t"}"#)
    try Files.write(root + "/pages/1.txt", "one")
    try Files.write(root + "/pages/2.txt", "two")
    try Files.write(root + "/run.sh", "#!/bin/sh\n", permissions: 0o755)
    try Files.symlink(root + "/latest", to: "pages/2.txt")
}

@Suite("FileWrapper on disk")
struct FileWrapperDiskTests {
    @Test("opening reads names and stat data, never a file's bytes")
    func lazyOpen() throws {
        let directory = try TemporaryDirectory("fw-open")
        try makeSamplePackage(at: directory.path)
        let counter = StepCounter()
        let package = try IOFaultInjection.withInjector(counter) {
            try FileWrapper(url: URL(fileURLWithPath: directory.path))
        }
        #expect(counter.count(.read) == 0)
        #expect(package.isDirectory)
        #expect(package.filename == AtomicFile.split(directory.path).name)
        let children = try #require(package.fileWrappers)
        #expect(Set(children.keys) == ["metadata.json", "pages", "media", "run.sh", "latest"])
        #expect(children["pages"]?.fileWrappers?.keys.sorted() == ["1.txt", "2.txt"])
        #expect(children["media"]?.fileWrappers?["empty"]?.fileWrappers == [:])
        #expect(children["latest"]?.symbolicLinkDestination == "pages/2.txt")
        #expect(children["run.sh"]?.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? Int == 0o755)
        let page = try #require(children["pages"]?.fileWrappers?["1.txt"])
        #expect(page.filename == "1.txt" && page.preferredFilename == "1.txt")
        let date = try #require(page.fileAttributes[FileAttributeKey.modificationDate.rawValue] as? Date)
        #expect(abs(date.timeIntervalSinceNow) < 60)

        // Contents arrive on demand, and once.
        let reads = try IOFaultInjection.withInjector(counter) { () throws -> Data in
            _ = page.regularFileContents
            return try page.readRegularFileContents()
        }
        #expect(reads == Data("one".utf8))
        #expect(counter.count(.read) == 1)
    }

    @Test("a child removed behind the wrapper's back gives a clear error, not a crash")
    func vanishedChild() throws {
        let directory = try TemporaryDirectory("fw-vanish")
        try makeSamplePackage(at: directory.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
        let page = try #require(package.fileWrappers?["pages"]?.fileWrappers?["1.txt"])
        try FileSystem.remove(directory.path + "/pages/1.txt")

        #expect(page.regularFileContents == nil)
        do {
            _ = try page.readRegularFileContents()
            Issue.record("reading a removed page succeeded")
        } catch let error as FileSystemError {
            #expect(error.path == directory.path + "/pages/1.txt")
            #expect(error.errno == .noSuchFileOrDirectory)
            #expect(error.description.contains("removed or moved after the package was opened"))
            #expect(error.description.contains("ENOENT"))
        }
        // Hashing the package reports the same file.
        do {
            _ = try package.contentHash
            Issue.record("hashing a package with a removed page succeeded")
        } catch let error as FileSystemError {
            #expect(error.path == directory.path + "/pages/1.txt")
        }
    }

    @Test("a child modified or replaced behind the wrapper's back is reported, never read as if unchanged")
    func changedChild() throws {
        let directory = try TemporaryDirectory("fw-change")
        try makeSamplePackage(at: directory.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
        let pages = try #require(package.fileWrappers?["pages"]?.fileWrappers)
        try Files.write(directory.path + "/pages/1.txt", "one, longer")
        #expect(pages["1.txt"]?.regularFileContents == nil)
        #expect(throws: FileSystemError.self) { try pages["1.txt"]?.readRegularFileContents() }
        do {
            _ = try pages["1.txt"]?.readRegularFileContents()
        } catch let error as FileSystemError {
            #expect(error.description.contains("changed after the package was opened"))
        }
        try FileSystem.remove(directory.path + "/pages/2.txt")
        try Files.symlink(directory.path + "/pages/2.txt", to: "1.txt")
        do {
            _ = try pages["2.txt"]?.readRegularFileContents()
            Issue.record("a page replaced by a link was read")
        } catch let error as FileSystemError {
            #expect(error.errno == .tooManySymbolicLinks)
            #expect(error.description.contains("replaced by a symbolic link"))
        }
    }

    @Test(".immediate reads every file at open, so later removals do not matter")
    func immediate() throws {
        let directory = try TemporaryDirectory("fw-immediate")
        try makeSamplePackage(at: directory.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path), options: [.immediate, .withoutMapping])
        try FileSystem.removeTree(directory.path + "/pages")
        #expect(package.fileWrappers?["pages"]?.fileWrappers?["2.txt"]?.regularFileContents == Data("two".utf8))
    }

    @Test("FIFOs inside a package are left out; a FIFO as the package is refused")
    func specialFiles() throws {
        let directory = try TemporaryDirectory("fw-fifo")
        try makeSamplePackage(at: directory.path)
        #expect(mkfifo(directory.path + "/pipe", 0o644) == 0)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
        #expect(package.fileWrappers?["pipe"] == nil)
        #expect(throws: FileSystemError.self) { try FileWrapper(url: URL(fileURLWithPath: directory.path + "/pipe")) }
        #expect(throws: FileSystemError.self) { try FileWrapper(url: URL(fileURLWithPath: directory.path + "/none")) }
    }

    @Test("read(from:) replaces the tree and invalidates the hashes above")
    func reread() throws {
        let directory = try TemporaryDirectory("fw-reread")
        try makeSamplePackage(at: directory.path)
        let package = try FileWrapper(url: URL(fileURLWithPath: directory.path))
        let pages = try #require(package.fileWrappers?["pages"])
        let before = try package.contentHash
        try Files.write(directory.path + "/pages/3.txt", "three")
        try pages.read(from: URL(fileURLWithPath: directory.path + "/pages"))
        #expect(pages.fileWrappers?.keys.sorted() == ["1.txt", "2.txt", "3.txt"])
        #expect(package.knownContentHash == nil)
        let after = try package.contentHash
        #expect(after != before)
        #expect(after == (try TreeScanner().scan(directory.path).snapshot.rootHash))
    }

    @Test("read(from:) keeps the child wrappers still on disk and updates them; a child another tree holds is replaced")
    func rereadKeepsChildren() throws {
        let directory = try TemporaryDirectory("fw-reread-children")
        try makeSamplePackage(at: directory.path)
        let url = URL(fileURLWithPath: directory.path)
        let package = try FileWrapper(url: url)
        let metadata = try #require(package.fileWrappers?["metadata.json"])
        let pages = try #require(package.fileWrappers?["pages"])
        let one = try #require(pages.fileWrappers?["1.txt"])
        let two = try #require(pages.fileWrappers?["2.txt"])
        let script = try #require(package.fileWrappers?["run.sh"])
        #expect(one.regularFileContents == Data("one".utf8))
        // pages/2.txt is also held by another tree: rereading this one must not change it.
        let other = FileWrapper(directoryWithFileWrappers: ["kept.txt": two])

        try Files.write(directory.path + "/metadata.json", #"{"title":"new"}"#)
        try Files.write(directory.path + "/pages/1.txt", "ONE, longer")
        try Files.write(directory.path + "/pages/2.txt", "TWO")
        try Files.write(directory.path + "/pages/3.txt", "three")
        try FileSystem.remove(directory.path + "/run.sh")
        try Files.makeDirectory(directory.path + "/run.sh")
        try FileSystem.removeDirectory(directory.path + "/media/empty")
        try package.read(from: url)

        #expect(package.fileWrappers?["metadata.json"] === metadata)
        #expect(metadata.regularFileContents == Data(#"{"title":"new"}"#.utf8))
        #expect(package.fileWrappers?["pages"] === pages)
        #expect(pages.fileWrappers?["1.txt"] === one)
        #expect(one.regularFileContents == Data("ONE, longer".utf8))
        #expect(pages.fileWrappers?.keys.sorted() == ["1.txt", "2.txt", "3.txt"])
        // The shared child: replaced here, untouched in the other tree.
        let newTwo = try #require(pages.fileWrappers?["2.txt"])
        #expect(newTwo !== two)
        #expect(newTwo.regularFileContents == Data("TWO".utf8))
        #expect(other.fileWrappers?["kept.txt"] === two)
        // A name whose kind changed keeps its wrapper, now a directory.
        #expect(package.fileWrappers?["run.sh"] === script)
        #expect(script.isDirectory && script.fileWrappers?.isEmpty == true)
        #expect(package.fileWrappers?["media"]?.fileWrappers?.isEmpty == true)
        // Rereading a child keeps its preferred filename (its key in the parent).
        try pages.read(from: URL(fileURLWithPath: directory.path + "/pages"))
        #expect(pages.preferredFilename == "pages" && package.fileWrappers?["pages"] === pages)
        // A wrapper once held by a directory that is gone counts as held by this tree alone.
        let notes = FileWrapper(regularFileWithContents: Data("notes".utf8))
        do { _ = FileWrapper(directoryWithFileWrappers: ["notes.txt": notes]) }
        notes.preferredFilename = "notes.txt"
        package.addFileWrapper(notes)
        try Files.write(directory.path + "/notes.txt", "notes, longer")
        try package.read(from: url)
        #expect(package.fileWrappers?["notes.txt"] === notes)
        #expect(notes.regularFileContents == Data("notes, longer".utf8))
        #expect(try package.contentHash == (try TreeScanner().scan(directory.path).snapshot.rootHash))
        #expect(package.matchesContents(of: url))
        // Edits through a kept reference reach the tree, and the tree's next save.
        _ = try package.contentHash
        pages.addRegularFile(withContents: Data("four".utf8), preferredFilename: "4.txt")
        #expect(package.knownContentHash == nil)
        let saved = try TemporaryDirectory("fw-reread-children-saved")
        try package.write(to: URL(fileURLWithPath: saved.path + "/copy"), options: [], originalContentsURL: nil)
        #expect(try String(contentsOfFile: saved.path + "/copy/pages/4.txt", encoding: .utf8) == "four")
        #expect(try String(contentsOfFile: saved.path + "/copy/metadata.json", encoding: .utf8) == #"{"title":"new"}"#)
        #expect(try String(contentsOfFile: saved.path + "/copy/pages/1.txt", encoding: .utf8) == "ONE, longer")
    }

    @Test("matchesContents(of:) compares contents; needsToBeUpdated(from:) compares dates, modes and names")
    func comparisons() throws {
        let directory = try TemporaryDirectory("fw-compare")
        try makeSamplePackage(at: directory.path)
        let url = URL(fileURLWithPath: directory.path)
        let package = try FileWrapper(url: url)
        #expect(package.matchesContents(of: url))
        #expect(!package.needsToBeUpdated(from: url))
        #expect(!package.needsToBeUpdated(fromPath: directory.path))

        // A touched file: same bytes (matches), newer date (needs updating). The wrapper
        // knows its bytes because it hashed them; unread bytes of a changed file match nothing.
        _ = try package.contentHash
        try FileSystem.setModificationTime(directory.path + "/pages/1.txt", 1_000_000_000)
        #expect(package.matchesContents(of: url))
        #expect(!(try FileWrapper(url: url)).matchesContents(of: URL(fileURLWithPath: directory.path + "/x")))
        #expect(package.needsToBeUpdated(from: url))
        try package.read(from: url)
        #expect(!package.needsToBeUpdated(from: url))

        // Different bytes, same size.
        try Files.write(directory.path + "/pages/1.txt", "ONE")
        #expect(!package.matchesContents(of: url))
        try package.read(from: url)
        #expect(package.matchesContents(of: url))

        // A new name on disk.
        try Files.write(directory.path + "/extra", "")
        #expect(!package.matchesContents(of: url))
        #expect(package.needsToBeUpdated(from: url))

        // A wrapper made in memory matches a tree with the same contents.
        let memory = FileWrapper(directoryWithFileWrappers: [
            "a.txt": FileWrapper(regularFileWithContents: Data("a".utf8))
        ])
        let other = try TemporaryDirectory("fw-compare-b")
        try Files.write(other.path + "/a.txt", "a")
        #expect(memory.matchesContents(of: URL(fileURLWithPath: other.path)))
        #expect(memory.needsToBeUpdated(from: URL(fileURLWithPath: other.path)))
    }
}

@Suite("FileWrapper and the manifest's hidden entry")
struct FileWrapperReservedNameTests {
    @Test("the package's metadata directory is not content: left out when reading, comparing and hashing")
    func hiddenEntry() throws {
        let directory = try TemporaryDirectory("fw-reserved")
        try makeSamplePackage(at: directory.path)
        try Files.makeDirectory(PackageLayout.metadataDirectory(of: directory.path))
        try Files.write(PackageLayout.metadataDirectory(of: directory.path) + "/index", "x")
        let url = URL(fileURLWithPath: directory.path)
        let package = try FileWrapper(url: url)
        #expect(package.fileWrappers?[PackageLayout.metadataDirectoryName] == nil)
        #expect(package.matchesContents(of: url) && !package.needsToBeUpdated(from: url))
        let scanned = try TreeScanner(excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(directory.path)
        #expect(try package.snapshot() == scanned.snapshot)
    }
}

@Suite("Times beyond what nanoseconds since 1970 hold")
struct FarTimeTests {
    @Test("files dated 2300 or before 1970 read and save; distant dates set on a wrapper do not trap")
    func farTimes() throws {
        let directory = try TemporaryDirectory("far-times")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        try Files.write(source + "/future.txt", "from 2300")
        try Files.write(source + "/past.txt", "from 1600")
        for (name, date) in [("future.txt", "2300-01-01"), ("past.txt", "1600-01-01")] {
            let touched = try runProgram("/usr/bin/touch", ["-d", date, source + "/" + name])
            try #require(touched.status == 0, "\(touched.error)")
        }
        let future = try FileSystem.status(source + "/future.txt")
        #expect(future.modificationTime == .max)
        // (ext4 keeps times from 1901: the past file reads as its earliest.)
        #expect(try FileSystem.status(source + "/past.txt").modificationTime < 0)

        let wrapper = try FileWrapper(url: URL(fileURLWithPath: source), options: .immediate)
        #expect(wrapper.fileWrappers?.count == 2)
        try PackageSaver.save(DirectorySource(source), to: directory.url("p.pkg"), options: SaveOptions(durability: .none))
        #expect(try PackageScan.scan(directory.url("p.pkg")).snapshot.entries.count == 2)

        let file = FileWrapper(regularFileWithContents: Data("x".utf8))
        for date in [Date.distantFuture, Date.distantPast, Date(timeIntervalSince1970: .nan)] {
            file.fileAttributes = [FileAttributeKey.modificationDate.rawValue: date]
            #expect(file.fileAttributes[FileAttributeKey.modificationDate.rawValue] != nil)
        }
    }
}

@Suite("A nested package's metadata is content")
struct NestedPackageReadTests {
    @Test("rereading a child wrapper keeps the .pkgtool of a package nested inside the package")
    func rereadChildKeepsNestedMetadata() throws {
        let directory = try TemporaryDirectory("nested-reread")
        let inner = directory.url("inner-src")
        try Files.makeDirectory(inner)
        try Files.write(inner + "/a.txt", "a")
        let outer = directory.url("P")
        try Files.makeDirectory(outer)
        try PackageSaver.save(DirectorySource(inner), to: outer + "/sub", options: SaveOptions(durability: .none))
        let root = try FileWrapper(url: URL(fileURLWithPath: outer))
        #expect(root.fileWrappers?[".pkgtool"] == nil)
        let sub = try #require(root.fileWrappers?["sub"])
        #expect(sub.fileWrappers?[".pkgtool"] != nil)
        try sub.read(from: URL(fileURLWithPath: outer + "/sub"))
        #expect(sub.fileWrappers?[".pkgtool"] != nil)
    }
}
