import Foundation
import PackageTestSupport
import Testing
@testable import PackageCore

/// Building and editing wrapper trees in memory: Apple's key rules, parent links.
@Suite("FileWrapper in memory")
struct FileWrapperTests {
    func file(_ text: String, named name: String? = nil) -> FileWrapper {
        let wrapper = FileWrapper(regularFileWithContents: Data(text.utf8))
        wrapper.preferredFilename = name
        return wrapper
    }

    @Test("kinds and contents of each initializer")
    func kinds() throws {
        let regular = file("hello")
        #expect(regular.isRegularFile && !regular.isDirectory && !regular.isSymbolicLink)
        #expect(regular.regularFileContents == Data("hello".utf8))
        #expect(regular.fileWrappers == nil)

        let directory = FileWrapper(directoryWithFileWrappers: [:])
        #expect(directory.isDirectory && directory.fileWrappers == [:])
        #expect(directory.regularFileContents == nil)
        #expect(throws: FileSystemError.self) { try directory.readRegularFileContents() }

        let relative = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "pages/a.txt"))
        #expect(relative.isSymbolicLink)
        #expect(relative.symbolicLinkDestination == "pages/a.txt")
        #expect(relative.symbolicLinkDestinationURL?.relativePath == "pages/a.txt")
        let absolute = FileWrapper(symbolicLinkWithDestinationURL: URL(fileURLWithPath: "/etc/hostname"))
        #expect(absolute.symbolicLinkDestination == "/etc/hostname")
    }

    @Test("a duplicate preferred name gets a unique key, as Apple's does")
    func uniqueKeys() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let first = file("1", named: "page.txt")
        let second = file("2", named: "page.txt")
        let third = file("3", named: "page.txt")
        #expect(directory.addFileWrapper(first) == "page.txt")
        #expect(directory.addFileWrapper(second) == "2 - page.txt")
        #expect(directory.addFileWrapper(third) == "3 - page.txt")
        #expect(directory.keyForChild(second) == "2 - page.txt")
        #expect(directory.keyForChildFileWrapper(third) == "3 - page.txt")
        #expect(directory.fileWrappers?.count == 3)
        // Adding the same wrapper again changes nothing.
        #expect(directory.addFileWrapper(second) == "2 - page.txt")
        #expect(directory.fileWrappers?.count == 3)

        directory.removeFileWrapper(first)
        #expect(directory.keyForChild(first) == nil)
        #expect(directory.fileWrappers?["page.txt"] == nil)
        // The freed name is reused.
        #expect(directory.addRegularFile(withContents: Data("4".utf8), preferredFilename: "page.txt") == "page.txt")
        // Removing a stranger is a no-op.
        directory.removeFileWrapper(file("x", named: "x"))
        #expect(directory.fileWrappers?.count == 3)
    }

    @Test("changing a child's preferred name re-keys it in its parent")
    func rekeying() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        let child = file("a", named: "a.txt")
        let other = file("b", named: "b.txt")
        directory.addFileWrapper(child)
        directory.addFileWrapper(other)
        child.preferredFilename = "c.txt"
        #expect(directory.keyForChild(child) == "c.txt")
        #expect(directory.fileWrappers?["a.txt"] == nil)
        child.preferredFilename = "b.txt"
        #expect(directory.keyForChild(child) == "2 - b.txt")
        #expect(directory.keyForChild(other) == "b.txt")
    }

    @Test("init(directoryWithFileWrappers:) names children after their keys when they have no name")
    func directoryInitializer() {
        let unnamed = file("x")
        let named = file("y", named: "keep.txt")
        let directory = FileWrapper(directoryWithFileWrappers: ["x.txt": unnamed, "y.txt": named])
        #expect(unnamed.preferredFilename == "x.txt")
        #expect(named.preferredFilename == "keep.txt")
        #expect(directory.keyForChild(named) == "y.txt")
        #expect(directory.fileWrappers?["x.txt"] === unnamed)
    }

    @Test("names that cannot be file names are repaired")
    func sanitizedNames() {
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        #expect(directory.addRegularFile(withContents: Data(), preferredFilename: "a/b") == "a_b")
        #expect(directory.addRegularFile(withContents: Data(), preferredFilename: "..") == "_..")
        #expect(directory.addRegularFile(withContents: Data(), preferredFilename: "") == "_")
    }

    @Test("canonically equivalent names are two children, keyed by their bytes")
    func byteExactKeys() throws {
        let precomposed = "caf\u{E9}.txt"
        let decomposed = "cafe\u{301}.txt"
        #expect(precomposed == decomposed)  // Swift says equal; the file system does not.
        let directory = FileWrapper(directoryWithFileWrappers: [:])
        #expect(directory.addFileWrapper(file("1", named: precomposed)) == precomposed)
        #expect(directory.addFileWrapper(file("2", named: decomposed)) == decomposed)
        #expect(directory.orderedFileWrappers?.count == 2)
        #expect(directory.fileWrapper(forKey: precomposed)?.regularFileContents == Data("1".utf8))
        #expect(directory.fileWrapper(forKey: decomposed)?.regularFileContents == Data("2".utf8))
        let keys = directory.orderedFileWrappers!.map { Array($0.key.utf8) }
        #expect(keys == [Array(decomposed.utf8), Array(precomposed.utf8)])  // "e" < "\u{E9}" by bytes
    }

    @Test("file attributes: permissions and modification date round-trip")
    func attributes() {
        let wrapper = file("x")
        #expect(wrapper.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? Int == 0o644)
        #expect(wrapper.fileAttributes[FileAttributeKey.modificationDate.rawValue] == nil)
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        wrapper.fileAttributes = [
            FileAttributeKey.posixPermissions.rawValue: 0o755,
            FileAttributeKey.modificationDate.rawValue: date,
        ]
        #expect(wrapper.fileAttributes[FileAttributeKey.posixPermissions.rawValue] as? Int == 0o755)
        #expect(wrapper.fileAttributes[FileAttributeKey.modificationDate.rawValue] as? Date == date)
        #expect(wrapper.fileAttributes[FileAttributeKey.size.rawValue] as? Int == 1)
    }

    @Test("parents are weak: a dropped directory does not keep its children's parent alive")
    func weakParents() {
        let child = file("x", named: "x")
        do {
            let directory = FileWrapper(directoryWithFileWrappers: [:])
            directory.addFileWrapper(child)
            #expect(child.parents.count == 1)
        }
        #expect(child.parents.isEmpty)
    }

    @Test("one wrapper in two directories: a change below invalidates both")
    func sharedChild() throws {
        let shared = FileWrapper(directoryWithFileWrappers: ["a.txt": file("a")])
        shared.preferredFilename = "shared"
        let left = FileWrapper(directoryWithFileWrappers: [:])
        let right = FileWrapper(directoryWithFileWrappers: [:])
        left.addFileWrapper(shared)
        right.addFileWrapper(shared)
        let before = (try left.contentHash, try right.contentHash)
        #expect(before.0 == before.1)
        shared.addRegularFile(withContents: Data("b".utf8), preferredFilename: "b.txt")
        #expect(left.knownContentHash == nil && right.knownContentHash == nil)
        #expect(try left.contentHash != before.0)
        #expect(try left.contentHash == right.contentHash)
    }
}

@Suite("FileWrapper across threads")
struct FileWrapperConcurrencyTests {
    /// Forgets every cached hash below `wrapper`, so the next `contentHash` starts afresh.
    func forgetHashes(_ wrapper: FileWrapper) {
        wrapper.state.withLock { $0.cachedHash = nil }
        for (_, child) in wrapper.orderedFileWrappers ?? [] { forgetHashes(child) }
    }

    @Test("hashing while another task edits the tree never caches a stale hash")
    func editsDuringHashing() async throws {
        let pages = FileWrapper(directoryWithFileWrappers: [:])
        for index in 0..<200 {
            pages.addRegularFile(withContents: Data("page \(index)".utf8), preferredFilename: "\(index).txt")
        }
        pages.preferredFilename = "pages"
        let root = FileWrapper(directoryWithFileWrappers: [:])
        root.addFileWrapper(pages)

        let editor = Task.detached {
            for round in 0..<300 {
                let key = pages.addRegularFile(withContents: Data("extra \(round)".utf8), preferredFilename: "extra.txt")
                if round % 2 == 0, let extra = pages.fileWrapper(forKey: key) { pages.removeFileWrapper(extra) }
            }
        }
        let hasher = Task.detached { () -> Int in
            var hashes = 0
            for _ in 0..<300 {
                _ = try root.contentHash
                hashes += 1
            }
            return hashes
        }
        await editor.value
        #expect(try await hasher.value == 300)
        let cached = try root.contentHash
        forgetHashes(root)
        #expect(try root.contentHash == cached)
        #expect(pages.orderedFileWrappers?.count == 350)
    }
}

@Suite("One wrapper under two keys")
struct SharedChildTests {
    @Test("removing one key keeps the child's edits reaching the directory through the other")
    func removingOneKeyKeepsTheLink() throws {
        let child = FileWrapper(regularFileWithContents: Data("a".utf8))
        let directory = FileWrapper(directoryWithFileWrappers: ["one.txt": child, "two.txt": child])
        #expect(directory.fileWrappers?.count == 2)
        directory.removeFileWrapper(child)
        #expect(directory.fileWrappers?.count == 1)
        let before = try directory.contentHash
        child.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o755]
        #expect(try directory.contentHash != before)
    }
}
