import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Exports, ZIP exports included: a copy, staged beside the destination with
/// `StagedReplacement`, that leaves nothing else behind — when it succeeds, fails or is
/// cancelled.
@MainActor
@Suite("Exports")
struct ExportTests {
    @Test("three ZIP exports in a row leave exactly the archive in the destination folder", Prerequisite.programs("unzip"))
    func threeArchiveExports() async throws {
        let directory = try TemporaryDirectory("export-zip3")
        let source = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: source, pageCount: 4)
        let session = try await openNotebook(source)
        let out = directory.path + "/Out"
        try Files.makeDirectory(out)
        let archive = out + "/Trip.zip"
        for round in 0..<3 {
            _ = try session.document.loadPage(ids[0])
            session.document.edit(ids[0], text: "round \(round)")
            session.updateChangeCount(.done)
            try await session.export(to: fileURL(archive), contentType: .zip)
            #expect(try Trees.names(out) == ["Trip.zip"], "round \(round)")
            #expect(try Trees.names(directory.path) == ["Out", "Trip.notebook"])
            let zip = try ZipArchive.open(archive)
            try zip.verify()
            #expect(zip.entries.contains { $0.name == "pages/\(ids[0].uuidString).txt" })
            #expect(!zip.entries.contains { $0.name.hasPrefix(".pkgtool") })
        }
        // The archive holds the last round's page; the document's own file is untouched.
        let unpacked = directory.path + "/Unpacked"
        try Files.makeDirectory(unpacked)
        try runProgram(try Prerequisite.program("unzip"), ["-q", archive, "-d", unpacked])
        #expect(try text(at: unpacked + "/pages/\(ids[0].uuidString).txt") == "round 2")
        #expect(try text(at: source + "/pages/\(ids[0].uuidString).txt") == "page 0")
        #expect(session.hasUnsavedChanges)
    }

    @Test("a ZIP export that is cancelled or fails leaves the destination as it was and nothing beside")
    func archiveExportCancelledOrFailed() async throws {
        let directory = try TemporaryDirectory("export-zip-fail")
        let source = directory.path + "/Trip.notebook"
        _ = try await makeNotebook(at: source, pageCount: 3)
        let session = try await openNotebook(source)
        let archive = directory.path + "/Trip.zip"
        try await session.export(to: fileURL(archive), contentType: .zip)
        let before = try Files.read(archive)

        // Cancelled while the package is written into the staging folder.
        let pause = PauseAtStep(.write)
        let exporting = Task { @MainActor in
            try await IOFaultInjection.withInjector(pause) {
                try await session.export(to: fileURL(archive), contentType: .zip)
            }
        }
        #expect(await pause.reached.wait(seconds: 60), "the export never reached its first write")
        session.cancelSaving()
        pause.released.give()
        do {
            try await exporting.value
            Issue.record("a cancelled export completed")
        } catch let error as DocumentError {
            #expect(error.isCancellation && error.operation == .export)
        }
        try await waitUntil { !session.isSaving }
        #expect(try Files.read(archive) == before)
        #expect(try Trees.names(directory.path) == ["Trip.notebook", "Trip.zip"])

        // Failing: ENOSPC on every write.
        await #expect(throws: DocumentError.self) {
            try await IOFaultInjection.withInjector(FailingStep(.write, pathFragment: "", fault: .error(.noSpace))) {
                try await session.export(to: fileURL(archive), contentType: .zip)
            }
        }
        #expect(try Files.read(archive) == before)
        #expect(try Trees.names(directory.path) == ["Trip.notebook", "Trip.zip"])
    }

    @Test("an export after a failed save carries the pending edits, and the next save still writes them")
    func exportCarriesPendingEdits() async throws {
        let directory = try TemporaryDirectory("export-pending")
        let session = try await DocumentSession.create { configuration, _ in NotebookDocument(configuration: configuration) }
        session.durability = .none
        let ids = ["one", "two"].map { session.document.addPage($0) }
        session.updateChangeCount(.done)
        // The save fails after the snapshot (the document cleared its flags).
        await #expect(throws: DocumentError.self) {
            try await IOFaultInjection.withInjector(FailNth(.write, index: 2, error: .noSpace)) {
                try await session.save(to: fileURL(directory.path + "/New.notebook"))
            }
        }
        #expect(session.pendingSnapshotCount == 1)
        let third = session.document.addPage("three")
        session.updateChangeCount(.done)

        let copy = directory.path + "/Copy.notebook"
        try await session.export(to: fileURL(copy), contentType: .notebook)
        let expected = NotebookOnDisk(order: ids + [third], pages: [ids[0]: "one", ids[1]: "two", third: "three"])
        #expect(try NotebookOnDisk(at: copy) == expected)
        try verifyPackage(copy)
        #expect(session.hasUnsavedChanges && session.configuration.fileURL == nil)
        #expect(try Trees.names(directory.path) == ["Copy.notebook"])

        try await session.save(to: fileURL(directory.path + "/New.notebook"))
        #expect(try NotebookOnDisk(at: directory.path + "/New.notebook") == expected)
        #expect(!session.hasUnsavedChanges && session.pendingSnapshotCount == 0)
        try verifyPackage(directory.path + "/New.notebook")
    }
}
