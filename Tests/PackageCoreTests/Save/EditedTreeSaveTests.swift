import Foundation
import Glibc
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageCore

@Suite("Saving an edited FileWrapper tree")
struct EditedTreeSaveTests {
    func makePackage(_ root: String, folders: Int, filesPerFolder: Int) throws {
        try Files.makeDirectory(root)
        try Files.write(root + "/metadata.json", #"{"v":1}"#)
        for folder in 0..<folders {
            try Files.makeDirectory(root + "/pages/\(folder)")
            for index in 0..<filesPerFolder {
                try Files.write(root + "/pages/\(folder)/\(index).txt", "page \(folder).\(index)")
            }
        }
        try Files.makeDirectory(root + "/media/empty")
        try Files.symlink(root + "/cover", to: "pages/0/0.txt")
    }

    func save(_ tree: FileWrapper, _ package: String) throws -> SaveStatistics {
        try PackageSaver.save(FileWrapperSource(tree), to: package, options: SaveOptions(strategy: .journaled, durability: .none)).statistics
    }

    /// The package on disk equals the tree, and its manifest describes it exactly.
    func expectConsistent(_ tree: FileWrapper, _ package: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let onDisk = try Trees.contentHash(package)
        #expect(onDisk == (try tree.contentHash), sourceLocation: sourceLocation)
        let manifest = try #require(try PackageManifest.load(packagePath: package), sourceLocation: sourceLocation)
        let rescan = try PackageScan.scan(package, useManifest: false)
        #expect(manifest.snapshot.rootHash == onDisk, sourceLocation: sourceLocation)
        #expect(TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).map(\.nameStatusLine) == [], sourceLocation: sourceLocation)
        #expect(manifest.entryCount == rescan.snapshot.entries.count, sourceLocation: sourceLocation)
    }

    @Test("one edited file: visits one folder, writes one file and a small delta")
    func oneEdit() throws {
        let directory = try TemporaryDirectory("tree-one")
        let package = directory.url("doc.pkg")
        try makePackage(directory.url("src"), folders: 40, filesPerFolder: 50)
        _ = try PackageSaver.save(DirectorySource(directory.url("src")), to: package).statistics
        try Trees.settleDirectories(package)  // the folders just written, out of the racy granule

        let tree = try FileWrapper(url: URL(fileURLWithPath: package))
        let folder = try #require(tree.fileWrapper(forKey: "pages")?.fileWrapper(forKey: "17"))
        folder.removeFileWrapper(try #require(folder.fileWrapper(forKey: "3.txt")))
        folder.addRegularFile(withContents: Data("edited page".utf8), preferredFilename: "3.txt")

        let counter = StepCounter()
        let statistics = try IOFaultInjection.withInjector(counter) { try save(tree, package) }
        #expect(statistics.filesWritten == 1)
        #expect(statistics.bytesWritten == 11)
        #expect(statistics.metadataBytesWritten < 2048)
        #expect(statistics.filesHashed == 0)
        // Stats of the root's, pages' and folder 17's children, one per folder (42, to see
        // what changed behind the tree's back) and a few of pkgtool's own: not one per entry
        // of the package (2,000 files).
        #expect(counter.count(.stat) < 120 + 42, "\(counter.count(.stat)) stats")
        try expectConsistent(tree, package)

        // Nothing edited since: nothing to do. The folders the save wrote were stat'ed within
        // the clock tick of their change (racy), so the next save lists them once; from then
        // on nothing is stat'ed but each folder (to see what changed behind the tree's back)
        // and the manifest's files: never a file.
        let racy = try save(tree, package)
        #expect(racy.unchanged && racy.filesWritten == 0 && racy.metadataBytesWritten == 0)
        try Trees.settleDirectories(package)
        _ = try save(tree, package)
        let again = StepCounter()
        let second = try IOFaultInjection.withInjector(again) { try save(tree, package) }
        #expect(second.unchanged && second.filesWritten == 0 && second.metadataBytesWritten == 0)
        #expect(again.count(.stat) < 42 + 20, "one stat per folder (42) and a handful of the package's and manifest's")
    }

    @Test("every kind of edit, saved one after another, keeps package, tree and manifest equal")
    func everyKindOfEdit() throws {
        let directory = try TemporaryDirectory("tree-edits")
        let package = directory.url("doc.pkg")
        try makePackage(package, folders: 3, filesPerFolder: 4)
        try Trees.settleDirectories(package)
        try PackageManifest.writeIndex(try PackageScan.scan(package).snapshot, packagePath: package, durability: .none)
        let tree = try FileWrapper(url: URL(fileURLWithPath: package))
        let pages = try #require(tree.fileWrapper(forKey: "pages"))
        let edits: [(String, () throws -> Void)] = [
            ("add a file", { tree.addRegularFile(withContents: Data("new".utf8), preferredFilename: "notes.txt") }),
            ("remove a folder", { pages.removeFileWrapper(try #require(pages.fileWrapper(forKey: "1"))) }),
            ("add a folder with files", {
                let folder = FileWrapper(directoryWithFileWrappers: [
                    "a.txt": FileWrapper(regularFileWithContents: Data("a".utf8)),
                    "sub": FileWrapper(directoryWithFileWrappers: ["b.txt": FileWrapper(regularFileWithContents: Data("b".utf8))]),
                ])
                folder.preferredFilename = "9"
                pages.addFileWrapper(folder)
            }),
            ("replace a file by a folder", {
                tree.removeFileWrapper(try #require(tree.fileWrapper(forKey: "metadata.json")))
                let folder = FileWrapper(directoryWithFileWrappers: ["inside.json": FileWrapper(regularFileWithContents: Data("{}".utf8))])
                folder.preferredFilename = "metadata.json"
                tree.addFileWrapper(folder)
            }),
            ("replace a folder by a file", {
                tree.removeFileWrapper(try #require(tree.fileWrapper(forKey: "media")))
                tree.addRegularFile(withContents: Data("media".utf8), preferredFilename: "media")
            }),
            ("retarget the link", {
                tree.removeFileWrapper(try #require(tree.fileWrapper(forKey: "cover")))
                tree.addSymbolicLink(withDestinationURL: URL(fileURLWithPath: "pages/2/1.txt"), preferredFilename: "cover")
            }),
            ("make a file executable", {
                let file = try #require(pages.fileWrapper(forKey: "2")?.fileWrapper(forKey: "0.txt"))
                file.fileAttributes = [FileAttributeKey.posixPermissions.rawValue: 0o755]
            }),
            ("rewrite a file with identical bytes", {
                let folder = try #require(pages.fileWrapper(forKey: "2"))
                folder.removeFileWrapper(try #require(folder.fileWrapper(forKey: "2.txt")))
                folder.addRegularFile(withContents: Data("page 2.2".utf8), preferredFilename: "2.txt")
            }),
        ]
        for (label, edit) in edits {
            try edit()
            let statistics = try save(tree, package)
            #expect(statistics.filesHashed <= 1, "\(label)")
            try expectConsistent(tree, package)
            if label.hasPrefix("rewrite") { #expect(statistics.filesWritten == 0, "identical bytes are not written again") }
        }
        // Reading the package back gives the same tree.
        #expect(try FileWrapper(url: URL(fileURLWithPath: package)).contentHash == (try tree.contentHash))
    }

    @Test("a manifest rewritten behind the tree's back sends the save down the full comparison, still correct")
    func staleHead() throws {
        let directory = try TemporaryDirectory("tree-stale")
        let package = directory.url("doc.pkg")
        try makePackage(package, folders: 2, filesPerFolder: 3)
        try PackageManifest.writeIndex(try PackageScan.scan(package).snapshot, packagePath: package, durability: .none)
        let tree = try FileWrapper(url: URL(fileURLWithPath: package))
        // Someone else saves the package meanwhile.
        try Files.write(package + "/outsider.txt", "x")
        try PackageManifest.writeIndex(try PackageScan.scan(package).snapshot, packagePath: package, durability: .none)
        tree.addRegularFile(withContents: Data("mine".utf8), preferredFilename: "mine.txt")
        let statistics = try save(tree, package)
        #expect(statistics.filesWritten == 1)
        #expect(try FileSystem.statusIfExists(package + "/outsider.txt") == nil, "the tree is what gets saved")
        try expectConsistent(tree, package)
    }
}
