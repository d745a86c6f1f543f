import Foundation
import Observation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument

/// A list kept as one file, `items.txt`, one item a line: an app that knows how to merge it
/// (the union of both sides' lines, its own order first).
@Observable
final class ListDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.package]
    var items: [String] = []

    /// Both sides' lines: this side's, then the other's it lacks.
    static let union = ContentMerge(path: "items.txt") { _, _, local, other in
        let mine = String(decoding: local, as: UTF8.self).split(separator: "\n").map(String.init)
        let theirs = String(decoding: other, as: UTF8.self).split(separator: "\n").map(String.init)
        return Array((mine + theirs.filter { !mine.contains($0) }).joined(separator: "\n").utf8)
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending FileWrapperDocumentReader<[String]> {
        FileWrapperDocumentReader(configuration) { folder in
            String(decoding: folder.fileWrappers?["items.txt"]?.regularFileContents ?? Data(), as: UTF8.self)
                .split(separator: "\n").map(String.init)
        }
    }

    @MainActor func apply(snapshot: sending [String], previous: sending [String]?) async throws { items = snapshot }

    @MainActor func snapshot(contentType: UTType) async throws -> sending [String] { items }

    func writer(configuration: sending DocumentWriteConfiguration) -> sending FileWrapperDocumentWriter<[String]> {
        FileWrapperDocumentWriter(configuration) { items, previous in
            let folder = previous ?? FileWrapper(directoryWithFileWrappers: [:])
            if let old = folder.fileWrappers?["items.txt"] { folder.removeFileWrapper(old) }
            let file = FileWrapper(regularFileWithContents: Data(items.joined(separator: "\n").utf8))
            file.preferredFilename = "items.txt"
            folder.addFileWrapper(file)
            return folder
        }.merging(Self.union)
    }
}

@MainActor
@Suite("An app's merge of a file's contents")
struct ContentMergeTests {
    func open(_ path: String) async throws -> DocumentSession<ListDocument> {
        let session = try await DocumentSession.open(fileURL(path)) { _, _ in ListDocument() }
        session.durability = .none
        return session
    }

    /// Two sessions each add an item to the one file: the second save merges the two
    /// versions with the app's function — both items saved, no conflict version.
    @Test func bothSidesAddToTheSameFile() async throws {
        let directory = try TemporaryDirectory("content-merge")
        let path = directory.path + "/Groceries.list"
        let creator = try await DocumentSession.create { _, _ in ListDocument() }
        creator.durability = .none
        creator.document.items = ["milk"]
        creator.updateChangeCount(.done)
        try await creator.save(to: fileURL(path))

        let first = try await open(path)
        let second = try await open(path)
        first.document.items.append("bread")
        first.updateChangeCount(.done)
        try await first.save()
        second.document.items.append("eggs")
        second.updateChangeCount(.done)
        try await second.save()

        #expect(try text(at: path + "/items.txt") == "milk\neggs\nbread")
        #expect(second.lastSaveConflicts.isEmpty)
        #expect(try second.conflicts.isEmpty)
        #expect(second.lastSaveStatistics?.notes.contains { $0.contains("merged by the app") } == true)
        try verifyPackage(path)
    }

    /// The merge applies only where both sides changed a file it covers, of at most 16 MiB.
    @Test func itAppliesOnlyToWhatItCovers() {
        let file = { (path: String, size: Int64) in
            SnapshotEntry(path: path, kind: .regular, permissions: 0o644, size: size, hash: .empty)
        }
        let conflict = { (path: String, kind: MergeConflict.Kind, size: Int64) in
            MergeConflict(path: RelativePath(trusted: path), kind: kind, base: nil, local: file(path, size), other: file(path, size))
        }
        #expect(ListDocument.union.applies(to: conflict("items.txt", .bothModified, 10)))
        #expect(ListDocument.union.applies(to: conflict("items.txt", .addedDifferently, 10)))
        #expect(!ListDocument.union.applies(to: conflict("other.txt", .bothModified, 10)))
        #expect(!ListDocument.union.applies(to: conflict("items.txt", .permissionsDiffer, 10)))
        #expect(!ListDocument.union.applies(to: conflict("items.txt", .bothModified, ContentMerge.maximumSize + 1)))
    }
}
