// A package document holding one large media clip and a note, written with the guide's
// incremental FileWrapper pattern (reference text, "Package documents"): each part carries
// an isChanged flag, the writer replaces only the changed children of the previous
// wrapper, and `snapshot(contentType:)` clears the flags — the snapshot owns those edits
// from then on. Not a guide sample: the demos and the host's tests use it to show that a
// save of a large package can be cancelled, and that no edit is lost when it is.
import Foundation
import Observation
import PackageDocument

extension UTType {
    static let clipPackage = UTType(exportedAs: "com.example.clip-package", conformingTo: .package, filenameExtension: "clip")
}

/// The clip and the note as of one save; nil for a part unchanged since the last one.
struct ClipSnapshot {
    var clip: Data?
    var notes: String?
    /// The package's wrapper from the last read, to reuse its unchanged children.
    var fileWrapper: FileWrapper?
}

@Observable
final class ClipPackageDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.clipPackage]

    /// The clip's bytes; only the ones set since opening (a read leaves the clip on disk).
    var clip = Data()
    var clipChanged = false
    var notes = ""
    var notesChanged = false
    @ObservationIgnored
    private var fileWrapper: FileWrapper?

    func reader(configuration: sending DocumentReadConfiguration) -> sending FileWrapperDocumentReader<ClipSnapshot> {
        FileWrapperDocumentReader(configuration) { directory in
            let notes = try directory.fileWrappers?["notes.txt"]?.readRegularFileContents()
            return ClipSnapshot(clip: nil, notes: notes.map { String(decoding: $0, as: UTF8.self) }, fileWrapper: directory)
        }
    }

    @MainActor
    func apply(snapshot: sending ClipSnapshot, previous: sending ClipSnapshot?) async throws {
        notes = snapshot.notes ?? ""
        fileWrapper = snapshot.fileWrapper
    }

    func writer(configuration: sending DocumentWriteConfiguration) -> sending FileWrapperDocumentWriter<ClipSnapshot> {
        FileWrapperDocumentWriter(configuration) { snapshot, previous in
            let directory = snapshot.fileWrapper ?? previous ?? FileWrapper(directoryWithFileWrappers: [:])
            if let clip = snapshot.clip { ClipPackageDocument.replace("clip.bin", with: clip, in: directory) }
            if let notes = snapshot.notes { ClipPackageDocument.replace("notes.txt", with: Data(notes.utf8), in: directory) }
            return directory
        }
    }

    @MainActor
    func snapshot(contentType: UTType) async throws -> sending ClipSnapshot {
        let result = ClipSnapshot(
            clip: clipChanged ? clip : nil, notes: notesChanged ? notes : nil, fileWrapper: fileWrapper)
        // As the guide says: the snapshot owns these edits now.
        clipChanged = false
        notesChanged = false
        return result
    }

    /// Sets the clip (an edit the next save writes).
    @MainActor
    func setClip(_ data: Data) {
        clip = data
        clipChanged = true
    }

    /// Sets the note (an edit the next save writes).
    @MainActor
    func setNotes(_ text: String) {
        notes = text
        notesChanged = true
    }

    private static func replace(_ name: String, with data: Data, in directory: FileWrapper) {
        if let existing = directory.fileWrappers?[name] { directory.removeFileWrapper(existing) }
        let child = FileWrapper(regularFileWithContents: data)
        child.preferredFilename = name
        directory.addFileWrapper(child)
    }
}
