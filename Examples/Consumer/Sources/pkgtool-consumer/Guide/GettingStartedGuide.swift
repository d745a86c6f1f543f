// The code of the article "Getting started" (Sources/pkgtool.docc), compiled and run here
// against the public API only. Each block of the article is a whole unit: its imports and
// one function, nothing cut out of something else. Scripts/doc-snippets checks that every
// Swift block of the articles is found in these files, so keep the two in step.

import Foundation
import PackageCore

/// Saves the folder `draft` as the package `package` twice: the second save writes only
/// the page that changed.
func saveIncrementally(draft: URL, package: URL) throws {
    let first = try PackageSaver.save(DirectorySource(draft.path), to: package.path)
    print("first save: \(first.statistics.filesWritten) files written")

    let page = draft.appendingPathComponent("pages/1.txt")
    try Data("page one, edited\n".utf8).write(to: page)
    let second = try PackageSaver.save(DirectorySource(draft.path), to: package.path)
    print("second save: \(second.statistics.filesWritten) file written")
    print("root hash: \(second.statistics.rootHash)")
}

import Foundation
import PackageCore

/// What the next save of `draft` into `package` would change, without changing anything.
func listChanges(draft: URL, package: URL) throws -> [TreeChange] {
    let saved = try PackageScan.scan(package.path).snapshot  // the package, its .pkgtool left out
    let current = try TreeScanner().scan(draft.path).snapshot
    let changes = TreeDiff.changes(from: saved, to: current)
    for change in changes {
        print(change)  // "modified pages/2.txt", "added pages/3.txt (14 bytes)"…
    }
    return changes
}

import Foundation
import PackageZip

/// Zips the package to share it, then unzips the archive into a new folder, checked first.
func zipAndUnzip(package: URL, archive: URL, copy: URL) throws {
    let report = try ZipPacker.pack(package.path, to: archive.path)
    print("zipped \(report.entries) entries into \(report.archiveBytes) bytes")

    let zip = try ZipArchive.open(archive.path)  // the whole structure checked first
    try zip.extract(to: copy.path)  // built beside `copy`, moved into place when complete
    print("unzipped \(zip.entries.count) entries")
}

import Foundation
import PackageRemote

/// Syncs the package with an S3 store: pulls what another device pushed, merges it with
/// the package's own changes, pushes the result. The store's keys come from the AWS
/// variables or ~/.aws, as for the AWS CLI.
func syncWithStore(package: URL, remote: String) throws {
    let location = try RemoteLocation(parsing: remote)  // "s3://my-bucket/notes"
    let options = try RemoteOptions.fromEnvironment()
    let result = try PackageRemote.sync(package.path, with: location, options: options)
    print("\(result.action): version \(result.version.sequence)")
    for conflict in result.conflicts {
        print("kept both versions of \(conflict.path)")  // resolve them later
    }
}

import Foundation
import Observation
import PackageDocument

/// A note: a package holding one text file, as a document an app opens, edits and saves.
@Observable
final class NoteDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.package]
    var text = ""

    func reader(configuration: sending DocumentReadConfiguration) -> sending FileWrapperDocumentReader<String> {
        FileWrapperDocumentReader(configuration) { folder in
            let bytes = folder.fileWrappers?["note.txt"]?.regularFileContents ?? Data()
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    @MainActor func apply(snapshot: sending String, previous: sending String?) async throws { text = snapshot }

    @MainActor func snapshot(contentType: UTType) async throws -> sending String { text }

    func writer(configuration: sending DocumentWriteConfiguration) -> sending FileWrapperDocumentWriter<String> {
        FileWrapperDocumentWriter(configuration) { text, _ in
            let note = FileWrapper(regularFileWithContents: Data(text.utf8))
            note.preferredFilename = "note.txt"
            return FileWrapper(directoryWithFileWrappers: ["note.txt": note])
        }
    }
}

/// Creates a note, saves it, edits it and saves again: the second save writes the one
/// file that changed, crash-safe.
@MainActor
func hostANote(at url: URL) async throws {
    let session = try await DocumentSession.create { _, _ in NoteDocument() }
    session.document.text = "first draft"
    session.updateChangeCount(.done)
    try await session.save(to: url)

    session.document.text = "second draft"
    session.updateChangeCount(.done)
    try await session.save()
    print("saved \(session.lastSaveStatistics?.filesWritten ?? 0) file")
}
