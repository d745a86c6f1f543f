import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

@MainActor
@Suite("Flat-file documents in a DocumentSession")
struct TextDocumentTests {
    func openText(_ path: String) async throws -> DocumentSession<TextDocument> {
        let session = try await DocumentSession.open(fileURL(path)) { configuration, _ in
            TextDocument(configuration: configuration)
        }
        session.durability = .none
        return session
    }

    @Test("open, edit, save, reopen")
    func roundTrip() async throws {
        let directory = try TemporaryDirectory("doc-text")
        let path = directory.path + "/note.txt"
        try Files.write(path, "hello")
        let session = try await openText(path)
        #expect(session.document.text == "hello")
        #expect(session.contentType == .utf8PlainText)
        #expect(!session.hasUnsavedChanges)
        #expect(session.configuration.lastContentModificationDate != nil)

        session.document.text = "hello, world"
        session.updateChangeCount(.done)
        #expect(session.hasUnsavedChanges)
        try await session.save()
        #expect(!session.hasUnsavedChanges)
        #expect(try text(at: path) == "hello, world")
        #expect(session.progress?.fractionCompleted == 1)
        #expect(try visibleNames(in: directory.path) == ["note.txt"])

        let again = try await openText(path)
        #expect(again.document.text == "hello, world")
    }

    @Test("save as moves the document; export writes a copy and leaves it where it is")
    func saveAsAndExport() async throws {
        let directory = try TemporaryDirectory("doc-saveas")
        let path = directory.path + "/a.txt"
        try Files.write(path, "one")
        let session = try await openText(path)
        session.document.text = "two"
        session.updateChangeCount(.done)

        try await session.export(to: fileURL(directory.path + "/copy.txt"), contentType: .utf8PlainText)
        #expect(try text(at: directory.path + "/copy.txt") == "two")
        #expect(session.configuration.fileURL?.path == path)
        #expect(session.hasUnsavedChanges)
        #expect(try text(at: path) == "one")

        try await session.save(to: fileURL(directory.path + "/b.txt"))
        #expect(session.configuration.fileURL?.path == directory.path + "/b.txt")
        #expect(!session.hasUnsavedChanges)
        #expect(try text(at: directory.path + "/b.txt") == "two")
        #expect(try text(at: path) == "one")
    }

    @Test("revert discards unsaved changes")
    func revert() async throws {
        let directory = try TemporaryDirectory("doc-revert")
        let path = directory.path + "/a.txt"
        try Files.write(path, "saved")
        let session = try await openText(path)
        session.document.registerTextUndo(from: session.document.text, undoManager: session.undoManager)
        session.document.text = "unsaved"
        #expect(session.hasUnsavedChanges)
        try await session.revert()
        #expect(session.document.text == "saved")
        #expect(!session.hasUnsavedChanges && !session.undoManager.canUndo)
    }

    @Test("undo registrations drive the dirty flag; undo back to the saved state is clean")
    func undoDrivenChanges() async throws {
        let directory = try TemporaryDirectory("doc-undo")
        let path = directory.path + "/a.txt"
        try Files.write(path, "a")
        let session = try await openText(path)
        let document = session.document
        document.registerTextUndo(from: document.text, undoManager: session.undoManager)
        document.text = "ab"
        #expect(session.changeCount == 1 && session.hasUnsavedChanges)
        #expect(session.undoManager.undoActionName == "Edit")
        session.undoManager.undo()
        #expect(document.text == "a" && !session.hasUnsavedChanges)
        session.undoManager.redo()
        #expect(document.text == "ab" && session.hasUnsavedChanges)
        #expect(session.undoManager.canUndo && !session.undoManager.canRedo)
    }

    @Test("autosave waits for a pause in changes, then saves once")
    func debouncedAutosave() async throws {
        let directory = try TemporaryDirectory("doc-autosave")
        let path = directory.path + "/a.txt"
        try Files.write(path, "0")
        let session = try await openText(path)
        session.startAutosaving(after: .milliseconds(200))
        let counter = IOCounter()
        try await IOFaultInjection.withInjector(counter) {
            for round in 1...5 {
                session.document.registerTextUndo(from: session.document.text, undoManager: session.undoManager)
                session.document.text = "\(round)"
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try text(at: path) == "0")
            var waited = 0
            while session.hasUnsavedChanges && waited < 100 {
                try await Task.sleep(for: .milliseconds(20))
                waited += 1
            }
        }
        #expect(!session.hasUnsavedChanges)
        #expect(try text(at: path) == "5")
        #expect(counter.count(.rename) == 1, "one autosave (one atomic replacement), not one per change")
        session.stopAutosaving()
    }

    @Test("a failed save reports its error and leaves the last good version on disk")
    func failedSave() async throws {
        let directory = try TemporaryDirectory("doc-fail")
        let path = directory.path + "/a.txt"
        try Files.write(path, "good")
        let session = try await openText(path)
        session.document.text = "lost?"
        session.updateChangeCount(.done)
        let full = FailingStep(.write, pathFragment: "", fault: .error(.noSpace))
        do {
            try await IOFaultInjection.withInjector(full) { try await session.save() }
            Issue.record("the save succeeded on a full disk")
        } catch let error as DocumentError {
            #expect(error.operation == .save)
            #expect(error.description.contains("cannot save '\(path)'"))
            #expect(error.description.contains("ENOSPC"))
        }
        #expect(session.lastError != nil)
        #expect(session.hasUnsavedChanges)
        #expect(try text(at: path) == "good")
        #expect(try visibleNames(in: directory.path) == ["a.txt"])
        try await session.save()
        #expect(try text(at: path) == "lost?")
    }

    @Test("a new document has no file until saved as; a directory is not opened as flat text")
    func newDocument() async throws {
        let directory = try TemporaryDirectory("doc-new")
        let session = try await DocumentSession.create(creationSource: .note) { configuration, context in
            #expect(context.creationSource == .note)
            #expect(configuration.fileURL == nil)
            return QuickTextDocument()
        }
        session.document.text = "fresh"
        session.updateChangeCount(.done)
        await #expect(throws: DocumentError.self) { try await session.save() }
        try await session.save(to: fileURL(directory.path + "/fresh.txt"))
        #expect(try text(at: directory.path + "/fresh.txt") == "fresh")

        try Files.makeDirectory(directory.path + "/folder.txt")
        do {
            _ = try await DocumentSession.open(fileURL(directory.path + "/folder.txt")) { _, _ in QuickTextDocument() }
            Issue.record("a directory opened as text")
        } catch let error as DocumentError {
            // A folder could never be saved back as flat text: refused before the reader
            // runs (issue 26 item 4).
            #expect(error.code == .unsupportedContentType)
            #expect(error.description.contains("it is a folder, and public.plain-text is written as a file"))
        }
    }
}
