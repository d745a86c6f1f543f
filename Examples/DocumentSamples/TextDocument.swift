// The guide's flat-file document (reference text, "Flat-file document"), with its SwiftUI
// view and App removed. Corrections (Specs/document.md): imports; `snapshot(contentType:)`
// returns `sending String`, as the protocol requires.
import Foundation
import Observation
import PackageDocument

@Observable
final class TextDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes = [UTType.utf8PlainText]

    var text: String
    var configuration: URLDocumentConfiguration

    init(configuration: URLDocumentConfiguration) {
        self.text = ""
        self.configuration = configuration
    }

    func reader(
        configuration: sending DocumentReadConfiguration
    ) -> sending FileWrapperDocumentReader<String> {
        FileWrapperDocumentReader(configuration) { fileWrapper in
            guard let data = fileWrapper.regularFileContents,
                  let text = String(data: data, encoding: .utf8) else {
                return ""
            }
            return text
        }
    }

    @MainActor
    func apply(snapshot: String, previous: String?) async throws {
        self.text = snapshot
    }

    func writer(
        configuration: sending DocumentWriteConfiguration
    ) -> sending FileWrapperDocumentWriter<String> {
        FileWrapperDocumentWriter(configuration) { snapshot in
            FileWrapper(regularFileWithContents: Data(snapshot.utf8))
        }
    }

    @MainActor
    func snapshot(contentType: UTType) async throws -> sending String { text }
}

extension TextDocument {
    func registerTextUndo(from previousText: String, undoManager: UndoManager?) {
        undoManager?.registerUndo(withTarget: self) { document in
            let current = document.text
            document.text = previousText
            document.registerTextUndo(from: current, undoManager: undoManager)
        }
        undoManager?.setActionName("Edit")
    }
}
