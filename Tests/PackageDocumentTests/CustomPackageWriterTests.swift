import Foundation
import PackageCore
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageDocument

/// A package document with its own writer (not a `FileWrapperDocumentWriter`): it writes
/// every card as a file into a fresh directory. The host stages that directory beside the
/// package and saves it into the package through the engine (Specs/document.md, "Where a
/// writer writes"): the package gets a manifest and only changed files are written.
@MainActor
@Suite("Custom package writers")
struct CustomPackageWriterTests {
    func makeDeck(_ cards: [String: String]) async throws -> DocumentSession<CardDeckDocument> {
        let session = try await DocumentSession.create { _, _ in CardDeckDocument() }
        session.durability = .none
        session.document.cards = cards
        session.updateChangeCount(.done)
        return session
    }

    @Test("saved through the engine: a manifest, only the changed files written, nothing left beside")
    func incrementalThroughEngine() async throws {
        let directory = try TemporaryDirectory("deck")
        let path = directory.path + "/Game.deck"
        let cards = Dictionary(uniqueKeysWithValues: (0..<20).map { ("card\($0).txt", "card \($0)") })
        let session = try await makeDeck(cards)
        try await session.save(to: fileURL(path))
        #expect(session.lastSaveStatistics?.filesWritten == 20)
        try verifyPackage(path)
        let inodes = try Dictionary(
            uniqueKeysWithValues: visibleNames(in: path).map { ($0, try FileSystem.status(path + "/" + $0).inode) })

        session.document.cards["card3.txt"] = "card 3, edited"
        session.document.cards["card7.txt"] = nil
        session.updateChangeCount(.done)
        try await session.save()
        let statistics = try #require(session.lastSaveStatistics)
        #expect(statistics.filesWritten == 1 && statistics.entriesRemoved == 1)
        #expect(try text(at: path + "/card3.txt") == "card 3, edited")
        #expect(try FileSystem.statusIfExists(path + "/card7.txt") == nil)
        let changed = try visibleNames(in: path).filter { try FileSystem.status(path + "/" + $0).inode != inodes[$0] }
        #expect(changed == ["card3.txt"], "unchanged cards keep their files")
        try verifyPackage(path)
        #expect(try Trees.names(directory.path) == ["Game.deck"])

        let reopened = try await DocumentSession.open(fileURL(path)) { _, _ in CardDeckDocument() }
        #expect(reopened.document.cards.count == 19 && reopened.document.cards["card3.txt"] == "card 3, edited")
    }

    @Test("a writer that fails part way leaves the package as it was and nothing beside; the next save writes it all")
    func failingWriter() async throws {
        let directory = try TemporaryDirectory("deck-fail")
        let path = directory.path + "/Game.deck"
        let session = try await makeDeck(["a.txt": "a", "b.txt": "b", "c.txt": "c"])
        try await session.save(to: fileURL(path))
        let before = try Trees.contentHash(path)
        session.document.cards["b.txt"] = "b2"
        session.document.writerFails.store(1, ordering: .relaxed)
        session.updateChangeCount(.done)
        do {
            try await session.save()
            Issue.record("the failing writer's save succeeded")
        } catch let error as DocumentError {
            #expect(error.code == .documentFailed)
            #expect(error.description.contains("the document's writer failed: the deck's writer gave up after 1 card"))
        }
        #expect(try Trees.contentHash(path) == before)
        #expect(try Trees.names(directory.path) == ["Game.deck"])
        #expect(session.hasUnsavedChanges && session.pendingSnapshotCount == 1)
        // The same snapshot, written again once the writer works.
        session.document.writerFails.store(-1, ordering: .relaxed)
        try await session.save()
        #expect(try text(at: path + "/b.txt") == "b2")
        #expect(!session.hasUnsavedChanges)
        try verifyPackage(path)
    }

    @Test("a writer that writes nothing is refused with a clear error")
    func writerWritesNothing() async throws {
        let directory = try TemporaryDirectory("deck-nothing")
        let session = try await makeDeck(["a.txt": "a"])
        session.document.writesNothing = true
        do {
            try await session.save(to: fileURL(directory.path + "/Game.deck"))
            Issue.record("a save that wrote nothing succeeded")
        } catch let error as DocumentError {
            #expect(error.code == .nothingWritten)
            #expect(error.description.contains("returned without writing anything at its destination"))
        }
        #expect(try Trees.names(directory.path) == [])
    }

    @Test("the writer finds nothing at its destination and no previous snapshot there")
    func writerContract() async throws {
        let directory = try TemporaryDirectory("deck-contract")
        let path = directory.path + "/Game.deck"
        let session = try await makeDeck(["a.txt": "a"])
        try await session.save(to: fileURL(path))
        session.document.cards["b.txt"] = "b"
        session.updateChangeCount(.done)
        try await session.save()
        let seen = session.document.destinationsSeen.entries.withLock { $0 }
        #expect(seen.count == 2)
        #expect(seen.allSatisfy { !$0.existed && !$0.hadPrevious }, "a staged destination is fresh: previous is nil")
        #expect(seen.allSatisfy { $0.path.hasSuffix("/Game.deck") && $0.path != path })
    }
}

/// Cards, each a text file in the package.
final class CardDeckDocument: Document {
    static let readableContentTypes = [
        UTType(exportedAs: "com.example.deck", conformingTo: .package, filenameExtension: "deck")
    ]

    var cards: [String: String] = [:]
    /// Makes the writer throw after writing this many cards (-1: never), whatever the
    /// snapshot: a writer's trouble that passes.
    let writerFails = FailSwitch()
    var writesNothing = false
    /// What each write found at its destination.
    let destinationsSeen = DestinationLog()

    struct Snapshot {
        var cards: [String: String]
        var writesNothing: Bool
    }

    struct GaveUp: Error, CustomStringConvertible {
        var count: Int
        var description: String { "the deck's writer gave up after \(count) card" + (count == 1 ? "" : "s") }
    }

    struct Reader: DocumentReader {
        nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending Snapshot {
            var cards: [String: String] = [:]
            for name in try visibleNames(in: source.path) { cards[name] = try text(at: source.path + "/" + name) }
            return Snapshot(cards: cards, writesNothing: false)
        }
    }

    struct Writer: DocumentWriter {
        let log: DestinationLog
        let fails: FailSwitch

        nonisolated func write(
            content: sending Snapshot, to destination: URL, previous: sending Snapshot?, progress: consuming Subprogress
        ) async throws {
            let existed = FileManager.default.fileExists(atPath: destination.path)
            log.entries.withLock { $0.append((destination.path, existed, previous != nil)) }
            if content.writesNothing { return }
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
            for (index, (name, text)) in content.cards.sorted(by: { $0.key < $1.key }).enumerated() {
                let limit = fails.load(ordering: .relaxed)
                if limit >= 0, index == limit { throw GaveUp(count: limit) }
                try Data(text.utf8).write(to: destination.appending(path: name))
            }
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer { Writer(log: destinationsSeen, fails: writerFails) }

    @MainActor func snapshot(contentType: UTType) async throws -> sending Snapshot {
        Snapshot(cards: cards, writesNothing: writesNothing)
    }

    @MainActor func apply(snapshot: sending Snapshot, previous: sending Snapshot?) async throws {
        cards = snapshot.cards
    }
}

/// What a writer found at each destination it was given.
final class DestinationLog: Sendable {
    let entries = Mutex<[(path: String, existed: Bool, hadPrevious: Bool)]>([])
}

/// After how many cards a writer gives up (-1: never), read in the background.
final class FailSwitch: Sendable {
    private let limit = Atomic<Int>(-1)
    func store(_ value: Int, ordering: AtomicUpdateOrdering) { limit.store(value, ordering: .relaxed) }
    func load(ordering: AtomicLoadOrdering) -> Int { limit.load(ordering: .relaxed) }
}
