// A program that depends on pkgtool's libraries the way an app does: by version, through
// SwiftPM. It writes a package document with PackageDocument, saves a directory into a
// package with PackageCore, packs and unpacks it with PackageZip, and checks every step by
// the trees' content hashes. Scripts/consumer-check builds it against a tagged clone.
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
