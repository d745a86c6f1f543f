// A small package document, as an app would write one: a directory holding title.txt and
// one file per card under cards/.
import Foundation
import Observation
import PackageDocument

extension UTType {
    static let board = UTType(exportedAs: "org.example.board", conformingTo: .package, filenameExtension: "board")
}

/// What the writer and reader exchange: every card's text by file name, and the package's
/// wrapper from the last read or save so that unchanged cards are not written again.
struct BoardSnapshot {
    var title: String
    var cards: [String: String]
    var fileWrapper: FileWrapper?
}

@Observable
final class BoardDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.board]

    var title = "Untitled"
    var cards: [String: String] = [:]
    @ObservationIgnored private var lastWrapper: FileWrapper?

    func reader(configuration: sending DocumentReadConfiguration) -> sending FileWrapperDocumentReader<BoardSnapshot> {
        FileWrapperDocumentReader(configuration) { directory in
            let children = directory.fileWrappers ?? [:]
            guard let title = children["title.txt"]?.regularFileContents else {
                throw CocoaError(.fileReadCorruptFile)
            }
            var cards: [String: String] = [:]
            for (name, wrapper) in children["cards"]?.fileWrappers ?? [:] {
                cards[name] = String(decoding: wrapper.regularFileContents ?? Data(), as: UTF8.self)
            }
            return BoardSnapshot(title: String(decoding: title, as: UTF8.self), cards: cards, fileWrapper: directory)
        }
    }

    @MainActor
    func apply(snapshot: sending BoardSnapshot, previous: sending BoardSnapshot?) async throws {
        title = snapshot.title
        cards = snapshot.cards
        lastWrapper = snapshot.fileWrapper
    }

    @MainActor
    func snapshot(contentType: UTType) async throws -> sending BoardSnapshot {
        BoardSnapshot(title: title, cards: cards, fileWrapper: lastWrapper)
    }

    func writer(configuration: sending DocumentWriteConfiguration) -> sending FileWrapperDocumentWriter<BoardSnapshot> {
        FileWrapperDocumentWriter(configuration) { snapshot, previous in
            let directory = snapshot.fileWrapper ?? previous ?? FileWrapper(directoryWithFileWrappers: [:])
            replaceChild("title.txt", in: directory, with: FileWrapper(regularFileWithContents: Data(snapshot.title.utf8)))
            let cards = directory.fileWrappers?["cards"] ?? {
                let created = FileWrapper(directoryWithFileWrappers: [:])
                created.preferredFilename = "cards"
                directory.addFileWrapper(created)
                return created
            }()
            for (name, text) in snapshot.cards {
                // Only cards whose text changed get a new wrapper: the save writes nothing else.
                if cards.fileWrappers?[name]?.regularFileContents == Data(text.utf8) { continue }
                replaceChild(name, in: cards, with: FileWrapper(regularFileWithContents: Data(text.utf8)))
            }
            for (name, wrapper) in cards.fileWrappers ?? [:] where snapshot.cards[name] == nil {
                cards.removeFileWrapper(wrapper)
            }
            return directory
        }
    }
}

/// Puts `wrapper` in `directory` under `name`, in place of what was there.
private func replaceChild(_ name: String, in directory: FileWrapper, with wrapper: FileWrapper) {
    if let old = directory.fileWrappers?[name] { directory.removeFileWrapper(old) }
    wrapper.preferredFilename = name
    directory.addFileWrapper(wrapper)
}
