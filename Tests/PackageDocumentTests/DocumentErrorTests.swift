import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Issue 15 item 4: every error of the document layer says what was asked, what was wrong
/// and what to do — never a bare "Cocoa error 518".
@MainActor
@Suite("Document errors a person can act on")
struct DocumentErrorTests {
    /// The three parts, and none of the phrases that say nothing.
    func expectActionable(_ error: DocumentError, asked: String, wrong: String, todo: String) {
        let text = error.description
        #expect(text.hasPrefix(asked + ": "), "\(text)")
        #expect(error.reason.contains(wrong), "\(error.reason)")
        #expect(todo.isEmpty || error.recoverySuggestion.contains(todo), "\(error.recoverySuggestion)")
        #expect(text == error.whatWasAsked + ": " + error.reason + ". " + error.recoverySuggestion)
        for vague in ["Cocoa error", "(CocoaError 5", "unknown error", "The operation could not be completed"] {
            #expect(!text.contains(vague), "\(text)")
        }
        #expect(error.errorDescription == text && error.failureReason == error.reason)
    }

    func caught(_ body: () async throws -> Void) async -> DocumentError? {
        do {
            try await body()
            Issue.record("no error")
            return nil
        } catch let error as DocumentError {
            return error
        } catch {
            Issue.record("not a DocumentError: \(type(of: error)) \(error)")
            return nil
        }
    }

    @Test("the host's own refusals")
    func hostRefusals() async throws {
        let directory = try TemporaryDirectory("errors-host")
        let notebook = try await DocumentSession.create { configuration, _ in NotebookDocument(configuration: configuration) }
        if let error = await caught({ try await notebook.save() }) {
            #expect(error.code == .noFileYet)
            expectActionable(error, asked: "cannot save the document", wrong: "it has no file yet", todo: "save(to:contentType:)")
        }
        let target = directory.path + "/a.txt"
        if let error = await caught({ try await notebook.save(to: fileURL(target), contentType: .plainText) }) {
            #expect(error.code == .unsupportedContentType)
            expectActionable(
                error, asked: "cannot save '\(target)' as public.plain-text",
                wrong: "the document does not write public.plain-text", todo: "com.mycompany.notebook")
        }
        let text = try await DocumentSession.create { _, _ in QuickTextDocument() }
        let archive = directory.path + "/a.zip"
        if let error = await caught({ try await text.export(to: fileURL(archive), contentType: .zip) }) {
            #expect(error.code == .notAPackageType)
            expectActionable(
                error, asked: "cannot export '\(archive)' as public.zip-archive",
                wrong: "is a package type, so there is no package to flatten into a ZIP archive",
                todo: "Export it as one of its own types instead (public.plain-text)")
        }
        let missing = directory.path + "/Missing/a.txt"
        if let error = await caught({ try await text.save(to: fileURL(missing)) }) {
            #expect(error.code == .folderMissing)
            expectActionable(
                error, asked: "cannot save '\(missing)'", wrong: "the folder '\(directory.path)/Missing' does not exist",
                todo: "Create the folder, or choose another location")
        }
        try Files.makeDirectory(directory.path + "/folder.txt")
        if let error = await caught({ try await text.save(to: fileURL(directory.path + "/folder.txt")) }) {
            #expect(error.code == .inTheWay)
            expectActionable(
                error, asked: "cannot save '\(directory.path)/folder.txt'", wrong: "a folder is in the way",
                todo: "Move it away, or choose another name")
        }
        #expect(text.hasUnsavedChanges == false && text.pendingSnapshotCount == 0, "refused before any snapshot")
    }

    @Test("I/O failures: the errno named, the fix suggested, the edits said to be kept")
    func ioFailures() async throws {
        let directory = try TemporaryDirectory("errors-io")
        let path = directory.path + "/a.txt"
        try Files.write(path, "old")
        let session = try await DocumentSession.open(fileURL(path)) { configuration, _ in
            TextDocument(configuration: configuration)
        }
        session.durability = .none
        session.document.text = "new"
        session.updateChangeCount(.done)
        if let error = await caught({
            try await IOFaultInjection.withInjector(FailingStep(.write, pathFragment: "", fault: .error(.noSpace))) {
                try await session.save()
            }
        }) {
            #expect(error.code == .diskFull)
            expectActionable(
                error, asked: "cannot save '\(path)'", wrong: "the disk is full",
                todo: "Free some space on the disk holding '\(directory.path)'")
            #expect(error.reason.contains("ENOSPC"))
            #expect(error.recoverySuggestion.contains("the edits stay in the document and the next save writes them"))
        }
        if let error = await caught({
            try await IOFaultInjection.withInjector(FailingStep(.create, pathFragment: "", fault: .error(.permissionDenied))) {
                try await session.save()
            }
        }) {
            #expect(error.code == .notWritable)
            expectActionable(
                error, asked: "cannot save '\(path)'", wrong: "cannot be written to", todo: "Check the permissions of")
            #expect(error.reason.contains("EACCES"))
        }
        try await session.save()
        #expect(try text(at: path) == "new")
    }

    @Test("what readers and writers throw is explained, Cocoa codes by name")
    func documentErrors() async throws {
        let directory = try TemporaryDirectory("errors-document")
        let cases: [(any Error, DocumentError.Code, String)] = [
            (CocoaError(.fileWriteUnsupportedScheme), .documentFailed, "CocoaError.fileWriteUnsupportedScheme"),
            (CocoaError(.fileWriteUnknown), .documentFailed, "CocoaError.fileWriteUnknown"),
            (CocoaError(.fileWriteOutOfSpace), .diskFull, "CocoaError.fileWriteOutOfSpace"),
            (CocoaError(.fileWriteNoPermission), .notWritable, "CocoaError.fileWriteNoPermission"),
            (Refusal(), .documentFailed, "the document's writer failed: the writer refuses to write on Sundays"),
        ]
        for (index, (thrown, code, phrase)) in cases.enumerated() {
            let session = try await DocumentSession.create { _, _ in ThrowingDocument(error: thrown) }
            let path = directory.path + "/\(index).bin"
            if let error = await caught({ try await session.save(to: fileURL(path)) }) {
                #expect(error.code == code, "\(thrown)")
                expectActionable(error, asked: "cannot save '\(path)'", wrong: phrase, todo: "")
                #expect(!error.recoverySuggestion.isEmpty)
                #expect(session.hasUnsavedChanges && session.pendingSnapshotCount == 1)
            }
            #expect(try Trees.names(directory.path) == [], "nothing left after \(thrown)")
        }
        // A reader's decoding error: damaged, with where it failed.
        let json = directory.path + "/bad.json"
        try Files.write(json, "{\"title\": 3}")
        do {
            _ = try await DocumentSession.open(fileURL(json)) { _, _ in DecodingDocument() }
            Issue.record("a bad file opened")
        } catch let error as DocumentError {
            #expect(error.code == .damaged)
            expectActionable(
                error, asked: "cannot open '\(json)'", wrong: "its content could not be decoded (title:",
                todo: "Check that it is a public.json document")
        }
    }
}

struct Refusal: Error, CustomStringConvertible {
    var description: String { "the writer refuses to write on Sundays" }
}

/// A flat document whose writer throws the error it was given.
final class ThrowingDocument: Document {
    static let readableContentTypes: [UTType] = [.data]
    let error: any Error
    init(error: any Error) { self.error = error }

    struct Reader: DocumentReader {
        nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending Data { Data() }
    }

    struct Writer: DocumentWriter {
        let error: any Error
        nonisolated func write(
            content: sending Data, to destination: URL, previous: sending Data?, progress: consuming Subprogress
        ) async throws {
            throw error
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer { Writer(error: error) }
    @MainActor func snapshot(contentType: UTType) async throws -> sending Data { Data("x".utf8) }
    @MainActor func apply(snapshot: sending Data, previous: sending Data?) async throws {}
}

/// A JSON document whose reader decodes a title.
final class DecodingDocument: Document {
    static let readableContentTypes: [UTType] = [.json]
    struct Content: Codable { var title: String }

    struct Reader: DocumentReader {
        nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending Content {
            try JSONDecoder().decode(Content.self, from: Data(contentsOf: source))
        }
    }

    struct Writer: DocumentWriter {
        nonisolated func write(
            content: sending Content, to destination: URL, previous: sending Content?, progress: consuming Subprogress
        ) async throws {
            try JSONEncoder().encode(content).write(to: destination)
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer { Writer() }
    @MainActor func snapshot(contentType: UTType) async throws -> sending Content { Content(title: "") }
    @MainActor func apply(snapshot: sending Content, previous: sending Content?) async throws {}
}
