// The guide's package document (reference text, "Package documents (incremental
// read/write)"). Corrections (Specs/document.md):
// - imports;
// - the snapshot's wrapper is `fileWrapper` everywhere (the guide declares
//   `previousFileWrapper` but builds and reads `fileWrapper`);
// - the writer takes the two-argument closure and falls back to `previous` (the wrapper the
//   host last wrote) when the snapshot carries none: with the one-argument form, a new
//   notebook's second save would start from an empty directory and drop every page not
//   edited since the first save;
// - `loadPage(_:)`, the on-demand read the guide describes but does not show, added;
// - the metadata is encoded with sorted keys: equal metadata is then equal bytes, so two
//   writers of one notebook that did not change it do not conflict on it.
import Foundation
import Observation
import PackageDocument

extension UTType {
    static let notebook = UTType(exportedAs: "com.mycompany.notebook")
}

struct NotebookSnapshot {
    var metadata: NotebookMetadata
    var pages: [UUID: NotebookPage]
    /// The package's `FileWrapper` from the last read or save.
    /// Carry it so the writer can reuse its unchanged children.
    var fileWrapper: FileWrapper?
}

struct NotebookMetadata: Codable {
    var title: String
    var pageOrder: [UUID]   // authoritative on-disk page list
    var createdDate: Date
}

struct NotebookPage: Equatable {
    var text: String
    /// `true` when `text` is out of sync with the page on disk. Set when the
    /// person edits a page; cleared in `snapshot(contentType:)` once the
    /// snapshot capturing the edit has been handed to the writer.
    var isChanged: Bool = false
}

@Observable
final class NotebookDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.notebook]

    var metadata: NotebookMetadata
    var pages: [UUID: NotebookPage]
    var configuration: URLDocumentConfiguration
    @ObservationIgnored
    private var previousFileWrapper: FileWrapper?

    init(configuration: URLDocumentConfiguration) {
        self.configuration = configuration
        self.metadata = NotebookMetadata(title: "Untitled", pageOrder: [], createdDate: .now)
        self.pages = [:]
    }
}

extension NotebookDocument {
    func reader(
        configuration: sending DocumentReadConfiguration
    ) -> sending FileWrapperDocumentReader<NotebookSnapshot> {
        FileWrapperDocumentReader(configuration) { directory in
            let childrenOnDisk = directory.fileWrappers ?? [:]
            guard let metadataOnDisk =
                childrenOnDisk["metadata.json"]?.regularFileContents else {
                throw CocoaError(.fileReadCorruptFile)
            }
            let metadata = try JSONDecoder()
                .decode(NotebookMetadata.self, from: metadataOnDisk)

            // Load only the first page now. The rest stay on disk until
            // the person opens them.
            let pageWrappersOnDisk = childrenOnDisk["pages"]?.fileWrappers ?? [:]
            var firstPage: [UUID: NotebookPage] = [:]
            if let id = metadata.pageOrder.first,
               let data = pageWrappersOnDisk["\(id.uuidString).txt"]?
                   .regularFileContents,
               let text = String(data: data, encoding: .utf8) {
                firstPage[id] = NotebookPage(text: text)
            }
            return NotebookSnapshot(
                metadata: metadata, pages: firstPage, fileWrapper: directory
            )
        }
    }

    @MainActor
    func apply(
        snapshot: sending NotebookSnapshot,
        previous: sending NotebookSnapshot?
    ) async throws {
        self.metadata = snapshot.metadata
        self.pages = snapshot.pages
        self.previousFileWrapper = snapshot.fileWrapper
    }

    func writer(
        configuration: sending DocumentWriteConfiguration
    ) -> sending FileWrapperDocumentWriter<NotebookSnapshot> {
        FileWrapperDocumentWriter(configuration) { snapshot, previous in
            let directory = snapshot.fileWrapper ?? previous
                ?? FileWrapper(directoryWithFileWrappers: [:])

            // Replace metadata in place unconditionally since it is small.
            if let existingMetadata = directory.fileWrappers?["metadata.json"] {
                directory.removeFileWrapper(existingMetadata)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys  // equal metadata, equal bytes
            let metadataData = try encoder.encode(snapshot.metadata)
            let metadataWrapper =
                FileWrapper(regularFileWithContents: metadataData)
            metadataWrapper.preferredFilename = "metadata.json"
            directory.addFileWrapper(metadataWrapper)

            // Reuse or create the "pages" subdirectory.
            let pagesDirectoryWrapper = directory.fileWrappers?["pages"] ?? {
                let created = FileWrapper(directoryWithFileWrappers: [:])
                created.preferredFilename = "pages"
                directory.addFileWrapper(created)
                return created
            }()

            // Touch only the pages whose content changed since the last save.
            // Unchanged pages are skipped entirely (no serialization, no
            // wrapper replace), so `FileWrapper` doesn't re-write them to disk.
            let existingPages = pagesDirectoryWrapper.fileWrappers ?? [:]
            for (pageID, pageContent) in snapshot.pages where pageContent.isChanged {
                let filename = "\(pageID.uuidString).txt"
                if let existing = existingPages[filename] {
                    pagesDirectoryWrapper.removeFileWrapper(existing)
                }
                let wrapper = FileWrapper(
                    regularFileWithContents: Data(pageContent.text.utf8)
                )
                wrapper.preferredFilename = filename
                pagesDirectoryWrapper.addFileWrapper(wrapper)
            }

            // Remove pages dropped from the document. `metadata.pageOrder` is
            // authoritative, not the in-memory `pages`, which only holds
            // pages the person opened.
            let liveFilenames = Set(
                snapshot.metadata.pageOrder.map { "\($0.uuidString).txt" }
            )
            for (filename, child) in existingPages where !liveFilenames.contains(filename) {
                pagesDirectoryWrapper.removeFileWrapper(child)
            }

            return directory
        }
    }

    @MainActor
    func snapshot(contentType: UTType) async throws -> sending NotebookSnapshot {
        let result = NotebookSnapshot(
            metadata: metadata, pages: pages, fileWrapper: previousFileWrapper
        )
        // Clear the dirty flags on the document. The snapshot just captured
        // owns those edits now; the writer will persist them, and any further
        // edits start a fresh `isChanged` cycle.
        for id in pages.keys {
            pages[id]?.isChanged = false
        }
        return result
    }
}

extension NotebookDocument {
    /// A page not read at open, read now from the package under coordination (the
    /// guide: "for incremental read, perform on-demand read via a FileCoordinator").
    ///
    /// - Throws: a clear error when the page's file vanished or changed behind the
    ///   document's back (`FileSystemError` with its path and errno), or when the
    ///   coordinator cannot lock the package.
    @MainActor
    func loadPage(_ id: UUID) throws -> NotebookPage {
        if let page = pages[id] { return page }
        guard let packageURL = configuration.fileURL else { throw CocoaError(.fileNoSuchFile) }
        let filename = "\(id.uuidString).txt"
        let coordinator = configuration.makeFileCoordinator()
        var error: NSError?
        var loaded: Result<NotebookPage, any Error> = .failure(CocoaError(.fileReadUnknown))
        coordinator.coordinate(
            readingItemAt: packageURL.appending(path: "pages/\(filename)"),
            options: [], error: &error
        ) { url in
            loaded = Result {
                // Through the package's wrapper: its throwing accessor says what happened
                // to a page that was there when the package was opened.
                if let wrapper = previousFileWrapper?.fileWrappers?["pages"]?.fileWrappers?[filename] {
                    return NotebookPage(text: String(decoding: try wrapper.readRegularFileContents(), as: UTF8.self))
                }
                return NotebookPage(text: String(decoding: try Data(contentsOf: url), as: UTF8.self))
            }
        }
        if let error { throw error }
        let page = try loaded.get()
        pages[id] = page
        return page
    }

    /// Adds a page at the end (an edit the writer will persist).
    @MainActor
    func addPage(_ text: String) -> UUID {
        let id = UUID()
        metadata.pageOrder.append(id)
        pages[id] = NotebookPage(text: text, isChanged: true)
        return id
    }

    /// Replaces a page's text.
    @MainActor
    func edit(_ id: UUID, text: String) {
        pages[id] = NotebookPage(text: text, isChanged: true)
    }

    /// Drops a page; the next save removes its file.
    @MainActor
    func removePage(_ id: UUID) {
        metadata.pageOrder.removeAll { $0 == id }
        pages[id] = nil
    }
}
