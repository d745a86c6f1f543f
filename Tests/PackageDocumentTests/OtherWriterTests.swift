import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Issue 26 item 3: another writer of an open document's package — another session, another
/// process, `pkgtool save` — is noticed, merged through `TreeMerge`, and never silently
/// overwritten (Specs/document.md, "Other writers").
@MainActor
@Suite("Other writers of an open package")
struct OtherWriterTests {
    func page(_ path: String, _ id: UUID) throws -> String { try text(at: path + "/pages/\(id.uuidString).txt") }

    /// The bytes of a conflict version kept in the package.
    func keptBytes(_ path: String, _ version: ConflictVersion) throws -> String {
        String(decoding: try Files.read(ConflictStore.contentPath(path, hash: version.hash, size: version.size)), as: UTF8.self)
    }

    @Test("two sessions edit the same page: the second save keeps its version and the first's as a conflict version")
    func samePage() async throws {
        let directory = try TemporaryDirectory("other-same")
        let path = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: path, pageCount: 4)
        let first = try await openNotebook(path)
        let second = try await openNotebook(path)

        first.document.edit(ids[1], text: "from the first")
        first.updateChangeCount(.done)
        try await first.save()
        #expect(first.lastSaveConflicts.isEmpty)

        second.document.edit(ids[1], text: "from the second")
        second.updateChangeCount(.done)
        try await second.save()  // succeeds: a notice, not an error
        #expect(!second.hasUnsavedChanges && second.lastError == nil)
        #expect(try page(path, ids[1]) == "from the second")
        let relative = "pages/\(ids[1].uuidString).txt"
        let added = second.lastSaveConflicts
        #expect(added.count == 1)
        let version = try #require(added.first)
        #expect(version.path.string == relative && version.side == .other && version.kind == .file)
        #expect(try keptBytes(path, version) == "from the first", "the first session's bytes are kept")
        #expect(try second.conflicts == added && first.conflicts == added)
        #expect(second.lastSaveStatistics?.notes.contains { $0.contains(relative) && $0.contains("conflict version") } == true)
        try verifyPackage(path)

        // Resolved through the library: the other version back in the tree, the document reread.
        let written = try await second.resolveConflict(at: version.path, keep: .other)
        #expect(written.map(\.string) == [relative])
        #expect(try page(path, ids[1]) == "from the first")
        #expect(try second.document.loadPage(ids[1]).text == "from the first")
        #expect(try second.conflicts.isEmpty)
        try verifyPackage(path)
    }

    @Test("two sessions edit different pages: both edits kept, no conflict, on every later save")
    func disjointPages() async throws {
        let directory = try TemporaryDirectory("other-disjoint")
        let path = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: path, pageCount: 5)
        let first = try await openNotebook(path)
        let second = try await openNotebook(path)

        first.document.edit(ids[1], text: "one, by the first")
        first.updateChangeCount(.done)
        try await first.save()
        second.document.edit(ids[2], text: "two, by the second")
        second.updateChangeCount(.done)
        try await second.save()
        #expect(second.lastSaveConflicts.isEmpty)
        #expect(second.lastSaveStatistics?.notes.contains { $0.contains("another writer saved the package meanwhile") } == true)
        #expect(try page(path, ids[1]) == "one, by the first" && page(path, ids[2]) == "two, by the second")

        // The first saves again: the second's page stays.
        first.document.edit(ids[3], text: "three, by the first")
        first.updateChangeCount(.done)
        try await first.save()
        #expect(first.lastSaveConflicts.isEmpty)
        #expect(try page(path, ids[1]) == "one, by the first")
        #expect(try page(path, ids[2]) == "two, by the second")
        #expect(try page(path, ids[3]) == "three, by the first")
        #expect(try first.conflicts.isEmpty)
        try verifyPackage(path)
    }

    @Test("nobody else saved: no merge, no notice, the save as incremental as before")
    func aloneNothingMerged() async throws {
        let directory = try TemporaryDirectory("other-alone")
        let path = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: path, pageCount: 3)
        let session = try await openNotebook(path)
        for round in 0..<3 {
            session.document.edit(ids[0], text: "round \(round)")
            session.updateChangeCount(.done)
            try await session.save()
            #expect(session.lastSaveConflicts.isEmpty)
            #expect(session.lastSaveStatistics?.notes.contains { $0.contains("another writer") } == false)
        }
        try verifyPackage(path)
    }

    @Test("another process saves the same page beside an open document: the conflict is surfaced, nothing lost")
    func anotherProcess() async throws {
        let directory = try TemporaryDirectory("other-process")
        let path = directory.path + "/Shared.notebook"
        let demo = builtExecutable("pkgdoc-demo")
        #expect(try await runProgramOffPool(demo, ["notebook-make", path, "6"]).status == 0)
        let session = try await openNotebook(path)
        let firstPage = try #require(session.document.metadata.pageOrder.first)

        // The other process opens the notebook, sets its first page to "B 1" and saves.
        let other = try await runProgramOffPool(demo, ["notebook-saves", path, "1", "B"])
        #expect(other.status == 0, "\(other.error)")

        session.document.edit(firstPage, text: "from this process")
        session.updateChangeCount(.done)
        try await session.save()
        #expect(try page(path, firstPage) == "from this process")
        let version = try #require(session.lastSaveConflicts.first)
        #expect(version.path.string == "pages/\(firstPage.uuidString).txt" && version.side == .other)
        #expect(try keptBytes(path, version) == "B 1")
        try verifyPackage(path)
    }

    @Test("`pkgtool save` beside an open document: its change to an untouched page is kept, to an edited one listed")
    func pkgtoolSaveBeside() async throws {
        let directory = try TemporaryDirectory("other-pkgtool")
        let path = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: path, pageCount: 4)
        let session = try await openNotebook(path)

        // A copy edited by hand, saved into the package by the CLI.
        let source = directory.path + "/edited"
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/metadata.json", try Files.read(path + "/metadata.json"))
        for id in ids { try Files.write(source + "/pages/\(id.uuidString).txt", try Files.read(path + "/pages/\(id.uuidString).txt")) }
        try Files.write(source + "/pages/\(ids[0].uuidString).txt", "zero, by pkgtool")
        try Files.write(source + "/pages/\(ids[2].uuidString).txt", "two, by pkgtool")
        let saved = try await runProgramOffPool(builtExecutable("pkgtool"), ["save", "--fsync", "none", source, path])
        #expect(saved.status == 0, "\(saved.output)\(saved.error)")

        session.document.edit(ids[2], text: "two, by the document")
        session.updateChangeCount(.done)
        try await session.save()
        #expect(try page(path, ids[0]) == "zero, by pkgtool", "a page the document did not touch keeps the other writer's version")
        #expect(try page(path, ids[2]) == "two, by the document")
        let version = try #require(session.lastSaveConflicts.first)
        #expect(session.lastSaveConflicts.count == 1 && version.path.string == "pages/\(ids[2].uuidString).txt")
        #expect(try keptBytes(path, version) == "two, by pkgtool")
        try verifyPackage(path)
    }

    @Test("a custom package writer: another session's change to another card kept, to the same card listed")
    func customWriter() async throws {
        let directory = try TemporaryDirectory("other-deck")
        let path = directory.path + "/Game.deck"
        let maker = try await DocumentSession.create { _, _ in CardDeckDocument() }
        maker.durability = .none
        maker.document.cards = ["a.txt": "a", "b.txt": "b", "c.txt": "c"]
        try await maker.save(to: fileURL(path))
        let first = try await DocumentSession.open(fileURL(path)) { _, _ in CardDeckDocument() }
        let second = try await DocumentSession.open(fileURL(path)) { _, _ in CardDeckDocument() }
        first.durability = .none
        second.durability = .none

        first.document.cards["a.txt"] = "a, by the first"
        first.document.cards["c.txt"] = "c, by the first"
        first.updateChangeCount(.done)
        try await first.save()
        second.document.cards["b.txt"] = "b, by the second"
        second.document.cards["c.txt"] = "c, by the second"
        second.updateChangeCount(.done)
        try await second.save()

        #expect(try text(at: path + "/a.txt") == "a, by the first", "the writer wrote its stale copy; the merge kept the change")
        #expect(try text(at: path + "/b.txt") == "b, by the second")
        #expect(try text(at: path + "/c.txt") == "c, by the second")
        let version = try #require(second.lastSaveConflicts.first)
        #expect(second.lastSaveConflicts.count == 1 && version.path.string == "c.txt")
        #expect(try keptBytes(path, version) == "c, by the first")
        try verifyPackage(path)
        #expect(try Trees.names(directory.path) == ["Game.deck"])
    }
}
