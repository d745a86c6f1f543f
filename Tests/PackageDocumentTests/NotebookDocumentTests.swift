import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples
import PackageZip

@MainActor
@Suite("The notebook package document")
struct NotebookDocumentTests {
    /// Makes and saves a notebook with `pageCount` pages; returns its path and page ids.
    func makeNotebook(in directory: TemporaryDirectory, pageCount: Int) async throws -> (String, [UUID]) {
        let session = try await DocumentSession.create { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        var ids: [UUID] = []
        for index in 0..<pageCount { ids.append(session.document.addPage("page \(index)")) }
        session.document.metadata.title = "Trip"
        let path = directory.path + "/Trip.notebook"
        try await session.save(to: fileURL(path))
        return (path, ids)
    }

    func open(_ path: String) async throws -> DocumentSession<NotebookDocument> {
        let session = try await DocumentSession.open(fileURL(path)) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        return session
    }

    func pageText(_ path: String, _ id: UUID) throws -> String {
        try text(at: path + "/pages/\(id.uuidString).txt")
    }

    @Test("a package is written with metadata.json and pages/*.txt, and typed by its extension")
    func layout() async throws {
        let directory = try TemporaryDirectory("nb-layout")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 3)
        #expect(try visibleNames(in: path) == ["metadata.json", "pages"])
        #expect(try visibleNames(in: path + "/pages") == ids.map { "\($0.uuidString).txt" }.sorted())
        #expect(try pageText(path, ids[1]) == "page 1")
        let session = try await open(path)
        #expect(session.contentType == .notebook)
        #expect(session.document.metadata.title == "Trip" && session.document.metadata.pageOrder == ids)
    }

    @Test("opening reads only the metadata and the first page (and pkgtool's manifest)")
    func lazyOpen() async throws {
        let directory = try TemporaryDirectory("nb-lazy")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 20)
        let counter = IOCounter()
        let session = try await IOFaultInjection.withInjector(counter) { try await open(path) }
        let content = counter.pathsRead.filter { !$0.contains("/.pkgtool/") }
        let read = Set(content.map { String($0.split(separator: "/").last!) })
        #expect(read == ["metadata.json", "\(ids[0].uuidString).txt"])
        #expect(session.document.pages.keys.sorted { $0.uuidString < $1.uuidString } == [ids[0]])
        // The others arrive on demand, through the coordinator.
        #expect(try session.document.loadPage(ids[7]).text == "page 7")
        #expect(counter.pathsRead.filter { !$0.contains("/.pkgtool/") }.count == 2)
    }

    @Test("editing a page saves it; a dropped page's file is gone after save; the rest stay")
    func editAndDrop() async throws {
        let directory = try TemporaryDirectory("nb-edit")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 5)
        let session = try await open(path)
        _ = try session.document.loadPage(ids[2])
        session.document.edit(ids[2], text: "edited")
        session.document.removePage(ids[4])
        session.updateChangeCount(.done)
        try await session.save()
        #expect(try pageText(path, ids[2]) == "edited")
        #expect(try pageText(path, ids[0]) == "page 0" && pageText(path, ids[3]) == "page 3")
        #expect(try FileSystem.statusIfExists(path + "/pages/\(ids[4].uuidString).txt") == nil)
        #expect(try visibleNames(in: path + "/pages").count == 4)
        let metadata = try JSONDecoder().decode(NotebookMetadata.self, from: Data(Files.read(path + "/metadata.json")))
        #expect(metadata.pageOrder == Array(ids[0..<4]))

        // A second save keeps working from the wrapper the first one wrote.
        session.document.edit(ids[1], text: "edited too")
        try await session.save()
        #expect(try pageText(path, ids[1]) == "edited too" && pageText(path, ids[2]) == "edited")
        #expect(try visibleNames(in: path + "/pages").count == 4)
    }

    @Test("a new notebook saved twice keeps the pages not edited since the first save")
    func newNotebookSavedTwice() async throws {
        let directory = try TemporaryDirectory("nb-twice")
        let session = try await DocumentSession.create { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        let first = session.document.addPage("first")
        let path = directory.path + "/New.notebook"
        try await session.save(to: fileURL(path))
        let second = session.document.addPage("second")
        try await session.save()
        #expect(try pageText(path, first) == "first" && pageText(path, second) == "second")
    }

    @Test("a package without metadata.json is refused with fileReadCorruptFile")
    func missingMetadata() async throws {
        let directory = try TemporaryDirectory("nb-corrupt")
        let (path, _) = try await makeNotebook(in: directory, pageCount: 2)
        try FileSystem.remove(path + "/metadata.json")
        do {
            _ = try await open(path)
            Issue.record("a notebook without metadata opened")
        } catch let error as DocumentError {
            #expect(error.operation == .open)
            #expect((error.underlyingError as? CocoaError)?.code == .fileReadCorruptFile)
            #expect(error.code == .damaged)
            #expect(
                error.description
                    == "cannot open '\(path)': the file is damaged or not in the format the document reads "
                    + "(the document's reader reported CocoaError.fileReadCorruptFile). "
                    + "Check that it is a com.mycompany.notebook document, or restore it from a backup.")
        }
    }

    @Test("a page deleted behind the document's back gives a clear error when opened, not a crash")
    func pageDeletedBehindOurBack() async throws {
        let directory = try TemporaryDirectory("nb-vanish")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 3)
        let session = try await open(path)
        let pagePath = path + "/pages/\(ids[2].uuidString).txt"
        try FileSystem.remove(pagePath)
        do {
            _ = try session.document.loadPage(ids[2])
            Issue.record("a deleted page loaded")
        } catch let error as FileSystemError {
            #expect(error.path == pagePath)
            #expect(error.errno == .noSuchFileOrDirectory)
            #expect(error.description.contains("removed or moved after the package was opened"))
        }
        #expect(try session.document.loadPage(ids[1]).text == "page 1")
    }

    @Test("an export interrupted by a write fault leaves no partial package at the destination")
    func interruptedExport() async throws {
        let directory = try TemporaryDirectory("nb-export")
        let (path, _) = try await makeNotebook(in: directory, pageCount: 10)
        let session = try await open(path)
        let destination = directory.path + "/Exported.notebook"
        var failingWrite = 0
        for step in [IOStep.write, .create, .makeDirectory, .rename] {
            let fault = FailingStep(step, pathFragment: "", fault: .error(.ioError))
            do {
                try await IOFaultInjection.withInjector(fault) {
                    try await session.export(to: fileURL(destination), contentType: .notebook)
                }
                Issue.record("export succeeded despite a failing \(step)")
            } catch let error as DocumentError {
                #expect(error.operation == .export)
                failingWrite += 1
            }
            #expect(try visibleNames(in: directory.path) == ["Trip.notebook"], "\(step)")
        }
        #expect(failingWrite == 4)
        try await session.export(to: fileURL(destination), contentType: .notebook)
        // The pages are byte for byte the same; metadata.json is re-encoded, and
        // JSONEncoder's key order varies from one encoding to the next on Linux.
        #expect(try TreeScanner().scan(destination + "/pages").snapshot.rootHash
            == (try TreeScanner().scan(path + "/pages").snapshot.rootHash))
        let decode = { (root: String) throws -> [UUID] in
            try JSONDecoder().decode(NotebookMetadata.self, from: Data(Files.read(root + "/metadata.json"))).pageOrder
        }
        #expect(try decode(destination) == decode(path))
        #expect(session.configuration.fileURL?.path == path)
    }

    @Test("export as .zip flattens the package into an archive; a failed export leaves nothing")
    func exportArchive() async throws {
        let directory = try TemporaryDirectory("nb-zip")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 5)
        let session = try await open(path)
        let archive = directory.path + "/Trip.zip"
        let fault = FailingStep(.write, pathFragment: "", fault: .error(.noSpace))
        await #expect(throws: DocumentError.self) {
            try await IOFaultInjection.withInjector(fault) {
                try await session.export(to: fileURL(archive), contentType: .zip)
            }
        }
        #expect(try visibleNames(in: directory.path) == ["Trip.notebook"])
        try await session.export(to: fileURL(archive), contentType: .zip)
        #expect(try visibleNames(in: directory.path) == ["Trip.notebook", "Trip.zip"])
        let entries = try ZipArchive.open(archive).entries.map(\.name)
        #expect(entries.contains("metadata.json"))
        #expect(entries.contains("pages/\(ids[2].uuidString).txt"))
        #expect(!entries.contains { $0.hasPrefix(".pkgtool") })
        try ZipArchive.open(archive).verify()
        #expect(session.configuration.fileURL?.path == path)
    }

    @Test("editing one page of a 1,000-page notebook writes that page and the metadata only")
    func thousandPages() async throws {
        let directory = try TemporaryDirectory("nb-1000")
        let (path, ids) = try await makeNotebook(in: directory, pageCount: 1000)
        let session = try await open(path)
        // The first save in place finds no manifest (the package was written whole by a
        // save-as) and records one; later saves add small deltas to it.
        session.updateChangeCount(.done)
        try await session.save()
        let first = try #require(session.lastSaveStatistics)
        print("first save in place: \(first.filesWritten) files, \(first.metadataBytesWritten) bytes of manifest, rebuilt: \(first.manifestRebuilt)")
        let inodes = try Dictionary(
            uniqueKeysWithValues: visibleNames(in: path + "/pages").map { ($0, try FileSystem.status(path + "/pages/" + $0).inode) })

        _ = try session.document.loadPage(ids[500])
        session.document.edit(ids[500], text: "page 500, edited")
        session.updateChangeCount(.done)
        try await session.save()

        let statistics = try #require(session.lastSaveStatistics)
        let pageBytes = Int64("page 500, edited".utf8.count)
        let metadataBytes = try FileSystem.status(path + "/metadata.json").size
        print("1,000-page notebook, one page edited: \(statistics.filesWritten) files, \(statistics.bytesWritten) bytes written, "
            + "\(statistics.metadataBytesWritten) bytes of manifest, strategy \(statistics.strategy)")
        // The metadata is rewritten every save (JSONEncoder's key order varies, so its bytes
        // usually differ); the page always is; nothing else.
        #expect(statistics.filesWritten >= 1 && statistics.filesWritten <= 2)
        #expect(statistics.bytesWritten == pageBytes || statistics.bytesWritten == pageBytes + metadataBytes)
        #expect(statistics.entriesRemoved == 0 && statistics.filesLinked == 0)
        #expect(statistics.metadataBytesWritten < 4096, "the manifest grows by a delta, not by the package's size")
        #expect(try pageText(path, ids[500]) == "page 500, edited")
        let changed = try visibleNames(in: path + "/pages").filter { try FileSystem.status(path + "/pages/" + $0).inode != inodes[$0] }
        #expect(changed == ["\(ids[500].uuidString).txt"])

        // Dropping a page removes its file and writes nothing else but the metadata.
        session.document.removePage(ids[10])
        try await session.save()
        let drop = try #require(session.lastSaveStatistics)
        #expect(drop.entriesRemoved == 1 && drop.filesWritten <= 1)
        #expect(try FileSystem.statusIfExists(path + "/pages/\(ids[10].uuidString).txt") == nil)
        #expect(try visibleNames(in: path + "/pages").count == 999)
    }
}
