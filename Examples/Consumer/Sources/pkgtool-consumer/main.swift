// A program that depends on pkgtool's libraries the way an app does: by version, through
// SwiftPM. It writes a package document with PackageDocument, saves a directory into a
// package with PackageCore, packs and unpacks it with PackageZip, and checks every step by
// the trees' content hashes. With PKGTOOL_CONSUMER_S3 set, it also pushes and pulls through
// that S3 remote with PackageRemote (Guide/RemoteGuide.swift). Scripts/consumer-check builds
// it against a tagged clone.
import Foundation
import PackageCore
import PackageDocument
import PackageZip

struct CheckFailed: Error, CustomStringConvertible {
    var description: String
}

func check(_ condition: Bool, _ what: String) throws {
    guard condition else { throw CheckFailed(description: "check failed: \(what)") }
}

/// The root hash of the tree at `path`, its `.pkgtool` left out as pkgtool does.
func rootHash(_ path: String) throws -> ContentHash {
    try TreeScanner(excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(path).snapshot.rootHash
}

@MainActor
func run(in work: String) async throws {
    // PackageDocument: a new document, saved, edited, saved again, reopened.
    let boardURL = URL(fileURLWithPath: work + "/Plans.board")
    let session = try await DocumentSession.create { _, _ in BoardDocument() }
    session.document.title = "Plans"
    for index in 1...20 { session.document.cards["\(index).txt"] = "card \(index)" }
    try await session.save(to: boardURL)
    session.document.cards["7.txt"] = "card 7, edited"
    session.updateChangeCount(.done)
    try await session.save()
    let written = session.lastSaveStatistics?.filesWritten ?? -1
    let reopened = try await DocumentSession.open(boardURL) { _, _ in BoardDocument() }
    try check(reopened.document.cards["7.txt"] == "card 7, edited", "the edited card reads back")
    try check(reopened.document.cards.count == 20, "every card reads back")
    print("document: saved 20 cards, then one edited card (files written: \(written)); reopened")

    // PackageCore: a directory saved into a package, incrementally, then compared.
    let draft = work + "/draft"
    let package = work + "/Notes.pkg"
    try FileManager.default.createDirectory(atPath: draft + "/pages", withIntermediateDirectories: true)
    for index in 1...50 {
        try Data("page \(index)\n".utf8).write(to: URL(fileURLWithPath: draft + "/pages/\(index).txt"))
    }
    let first = try PackageSaver.save(DirectorySource(draft), to: package).statistics
    try Data("page three\n".utf8).write(to: URL(fileURLWithPath: draft + "/pages/3.txt"))
    let second = try PackageSaver.save(DirectorySource(draft), to: package).statistics
    try check(first.filesWritten == 50 && second.filesWritten == 1, "the second save writes the one changed file")
    try check(try rootHash(package) == (try rootHash(draft)), "the package equals its source")
    print("save: \(first.filesWritten) files, then \(second.filesWritten) (\(second.strategy)); root \(second.rootHash)")

    // PackageZip: the package packed, checked, unpacked, compared.
    let archive = work + "/Notes.zip"
    let report = try ZipPacker.pack(package, to: archive)
    let opened = try ZipArchive.open(archive)
    let verified = try opened.verify()
    try opened.extract(to: work + "/Restored.pkg")
    try check(try rootHash(work + "/Restored.pkg") == (try rootHash(draft)), "the unpacked tree equals the source")
    print("zip: \(report.entries) entries, \(verified.hashesChecked) content hashes checked; unpacked equal")

    try await runGuides(in: work + "/guides", draft: draft)
    print(namespaceCheck())
}

/// The articles' code (Guide/), run so that what the documentation shows is known to work.
@MainActor
func runGuides(in work: String, draft: String) async throws {
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    let package = work + "/Guide.pkg"
    let saves = try guideSaveDirectory(draft: draft, package: package)
    try check(saves.map(\.filesWritten) == [50, 1], "the guide's second save writes one file")
    try check(try guideSaveWithProgress(draft: draft, package: package).filesWritten == 0, "nothing left to save")
    try check(guideSaveHandlingErrors(draft: draft, package: package), "a save that succeeds says so")
    try check(!guideSaveHandlingErrors(draft: work + "/missing", package: package), "a missing source is an error")
    try check(try guideEditInPlace(package: package).statistics.filesWritten == 1, "an edit in place writes one file")
    try check(try guideCopyTree(package: package, copy: work + "/Copy.pkg").filesWritten == 50, "a copy writes all")
    let strategies = try guideStrategies(draft: draft, package: work + "/Strategies.pkg")
    try check(strategies == [.journaled, .atomic, .atomic, .full, .journaled, .journaled], "each strategy ran")
    let notes = try guideCustomSource(package: work + "/Notes.pkg")
    try check(notes.map(\.filesWritten) == [3, 1], "the custom source's second save writes one note")
    try check(try rootHash(work + "/Notes.pkg") == notes[1].rootHash, "the custom source's package is what it said")
    let zipped = try guideZip(package: package, archive: work + "/Guide.zip", restored: work + "/Restored.pkg")
    try check(try rootHash(work + "/Restored.pkg") == (try rootHash(package)), "the guide's unpacked tree is equal")
    try check(try guideZipUntrusted(archive: work + "/Guide.zip").count == 50, "every page read back")
    try FileManager.default.createDirectory(atPath: work + "/book", withIntermediateDirectories: true)
    try Data("application/epub+zip".utf8).write(to: URL(fileURLWithPath: work + "/book/mimetype"))
    let epub = try guideZipOptions(book: work + "/book", epub: work + "/book.epub")
    try check(epub.files == 1 && zipped.files == 50, "the archives hold what was packed")
    let documentLog = try await guideDocumentSession(in: URL(fileURLWithPath: work))
    try check(documentLog.count == 4 && documentLog[0] == "unsaved changes: true", "the document guide ran")
    try check(FileManager.default.fileExists(atPath: work + "/Groceries.zip"), "the export wrote an archive")
    try await runRemoteGuide(in: work, package: package)
    try await runGettingStarted(in: URL(fileURLWithPath: work + "/start"), draft: URL(fileURLWithPath: draft))
    print("guides: every article's code ran")
}

let work = FileManager.default.temporaryDirectory.appendingPathComponent("pkgtool-consumer-\(getpid())").path
do {
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: work) }
    try await run(in: work)
    print("pkgtool-consumer: ok")
} catch {
    FileHandle.standardError.write(Data("pkgtool-consumer: \(error)\n".utf8))
    exit(1)
}

/// The "Getting started" article's programs, run in order on a copy of the draft.
@MainActor
func runGettingStarted(in folder: URL, draft original: URL) async throws {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let draft = folder.appendingPathComponent("Draft")
    try FileManager.default.copyItem(at: original, to: draft)
    let package = folder.appendingPathComponent("Notes.pkg")
    try saveIncrementally(draft: draft, package: package)
    try Data("page two, edited\n".utf8).write(to: draft.appendingPathComponent("pages/2.txt"))
    let changes = try listChanges(draft: draft, package: package)
    try check(changes.map(\.description) == ["modified pages/2.txt"], "the changes read as a person reads them")
    try zipAndUnzip(package: package, archive: folder.appendingPathComponent("Notes.zip"), copy: folder.appendingPathComponent("Copy.pkg"))
    try check(try rootHash(folder.path + "/Copy.pkg") == (try rootHash(package.path)), "the unzipped copy is the package")
    if let remote = ProcessInfo.processInfo.environment["PKGTOOL_CONSUMER_S3"] {
        try syncWithStore(package: package, remote: remote)
    }
    try await hostANote(at: folder.appendingPathComponent("Note.pkg"))
    let note = try String(contentsOf: folder.appendingPathComponent("Note.pkg/note.txt"), encoding: .utf8)
    try check(note == "second draft", "the note was saved")
}
