import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// A flat document of a type declared as the guide declares its types (no parent), written
/// by a FileWrapper writer as a regular file.
final class MemoDocument: ReadableDocument, WritableDocument {
    static let memo = UTType(exportedAs: "com.example.memo")
    static let readableContentTypes = [memo]
    var text = ""

    func reader(configuration: sending DocumentReadConfiguration) -> sending FileWrapperDocumentReader<String> {
        FileWrapperDocumentReader(configuration) { wrapper in String(decoding: try wrapper.readRegularFileContents(), as: UTF8.self) }
    }
    @MainActor func apply(snapshot: String, previous: String?) async throws { text = snapshot }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending FileWrapperDocumentWriter<String> {
        FileWrapperDocumentWriter(configuration) { snapshot in FileWrapper(regularFileWithContents: Data(snapshot.utf8)) }
    }
    @MainActor func snapshot(contentType: UTType) async throws -> sending String { text }
}

/// Issue 26 item 4, first case: a type declared as the guide declares it —
/// `UTType(exportedAs: "com.mycompany.notebook")`, no parent — is a package when the
/// document is one, a file when it is one; a type that could never be saved back to what
/// is opened is refused at open (Specs/document.md, "Packages and flat files").
@MainActor
@Suite("Packages and flat files")
struct DocumentKindTests {
    @Test("the guide's notebook type declares no kind; opened from a folder it saves, again and again")
    func guideNotebookOpenedFromAFolderSaves() async throws {
        #expect(!UTType.notebook.declaresKind && !UTType.notebook.isPackage)
        let directory = try TemporaryDirectory("kind-open")
        let path = directory.path + "/Trip.notebook"
        let ids = try await makeNotebook(at: path, pageCount: 3)
        let session = try await openNotebook(path)
        #expect(session.contentType == .notebook)
        for round in 0..<2 {
            session.document.edit(ids[1], text: "round \(round)")
            session.updateChangeCount(.done)
            try await session.save()
            #expect(try text(at: path + "/pages/\(ids[1].uuidString).txt") == "round \(round)")
            #expect(!session.hasUnsavedChanges)
        }
        try verifyPackage(path)
    }

    @Test("a new notebook of the guide's type: created, edited, saved as, edited and saved again")
    func guideNotebookCreatedSaves() async throws {
        let directory = try TemporaryDirectory("kind-create")
        let session = try await DocumentSession.create(contentType: .notebook) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        let first = session.document.addPage("first")
        session.updateChangeCount(.done)
        let path = directory.path + "/New.notebook"
        try await session.save(to: fileURL(path))
        #expect(try FileSystem.status(path).kind == .directory)
        let second = session.document.addPage("second")
        session.updateChangeCount(.done)
        try await session.save()
        #expect(try NotebookOnDisk(at: path) == NotebookOnDisk(order: [first, second], pages: [first: "first", second: "second"]))
        try verifyPackage(path)
        // Saved as over an existing notebook, and elsewhere.
        try await session.save(to: fileURL(directory.path + "/Other.notebook"))
        try verifyPackage(directory.path + "/Other.notebook")
    }

    @Test("a type without a declared kind written as a file by its wrapper is a file: save, export, reopen")
    func undeclaredFlatType() async throws {
        let directory = try TemporaryDirectory("kind-memo")
        let session = try await DocumentSession.create { _, _ in MemoDocument() }
        session.durability = .none
        session.document.text = "one"
        session.updateChangeCount(.done)
        let path = directory.path + "/a.memo"
        try await session.save(to: fileURL(path))
        #expect(try FileSystem.status(path).kind == .regular && text(at: path) == "one")
        session.document.text = "two"
        session.updateChangeCount(.done)
        try await session.save()
        #expect(try text(at: path) == "two")
        let reopened = try await DocumentSession.open(fileURL(path)) { _, _ in MemoDocument() }
        #expect(reopened.document.text == "two")

        // A new memo whose save failed after the snapshot: the export chains the pending
        // snapshot into a staging place that takes a file as well as a folder.
        let fresh = try await DocumentSession.create { _, _ in MemoDocument() }
        fresh.durability = .none
        fresh.document.text = "pending"
        fresh.updateChangeCount(.done)
        await #expect(throws: DocumentError.self) {
            try await IOFaultInjection.withInjector(FailNth(.rename, index: 1, error: .noSpace)) {
                try await fresh.save(to: fileURL(directory.path + "/b.memo"))
            }
        }
        #expect(fresh.pendingSnapshotCount == 1)
        try await fresh.export(to: fileURL(directory.path + "/copy.memo"), contentType: MemoDocument.memo)
        #expect(try text(at: directory.path + "/copy.memo") == "pending")
        #expect(try Trees.names(directory.path) == ["a.memo", "copy.memo"])
    }

    @Test("a type that declares itself flat is refused at open from a folder, before any edit")
    func declaredFlatTypeFromAFolderIsRefused() async throws {
        let directory = try TemporaryDirectory("kind-refuse")
        let folder = directory.path + "/notes.txt"
        try Files.makeDirectory(folder)
        try Files.write(folder + "/a", "a")
        await #expect {
            _ = try await DocumentSession.open(fileURL(folder)) { configuration, _ in TextDocument(configuration: configuration) }
        } throws: { error in
            guard let error = error as? DocumentError else { return false }
            return error.operation == .open && error.code == .unsupportedContentType
                && error.description.contains("it is a folder") && error.description.contains("never saved back")
        }
    }

    @Test("a document is created only as a type it writes")
    func createRefusesATypeItDoesNotWrite() async throws {
        await #expect {
            _ = try await DocumentSession.create(contentType: .plainText) { configuration, _ in
                NotebookDocument(configuration: configuration)
            }
        } throws: { error in
            (error as? DocumentError)?.code == .unsupportedContentType
        }
    }
}

