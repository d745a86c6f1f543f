import Foundation
import PackageTestSupport
import Testing
@testable import PackageCore

/// The redo journal: its format round-trips, it refuses what it did not write whole, and
/// applying it twice is applying it once.
@Suite("SaveJournal")
struct SaveJournalTests {
    static let operations: [SaveJournal.Operation] = [
        .remove(path: "old", kind: .directory), .makeDirectory(path: "new", permissions: 0o700),
        .rename(temporary: "n1", path: "new/a.txt"), .rename(temporary: "n2", path: "b.txt"),
        .setPermissions(path: "new", permissions: 0o555), .setPermissions(path: "b.txt", permissions: 0o600),
    ]

    @Test("encode, decode: the same journal; any changed byte, a truncation or another binding is refused")
    func roundTrip() throws {
        let binding = SaveJournal.Binding(root: 11, temporaryDirectory: 22)
        let journal = SaveJournal(binding: binding, operations: Self.operations)
        let bytes = journal.encoded()
        let decoded = try SaveJournal.decode(bytes, expected: binding).get()
        #expect(decoded == journal)
        for index in [0, 9, 20, bytes.count / 2, bytes.count - 1] {
            var damaged = bytes
            damaged[index] ^= 0x40
            #expect(throws: SaveJournal.Refusal.self) { try SaveJournal.decode(damaged, expected: binding).get() }
        }
        #expect(throws: SaveJournal.Refusal.self) { try SaveJournal.decode(Array(bytes.dropLast(3)), expected: binding).get() }
        #expect(throws: SaveJournal.Refusal.self) {
            try SaveJournal.decode(bytes, expected: SaveJournal.Binding(root: 11, temporaryDirectory: 23)).get()
        }
    }

    @Test("applied twice (a crash during the first, say) is applied once")
    func idempotent() throws {
        let home = try TemporaryDirectory("journal-apply")
        let package = home.url("doc.pkg")
        try Files.makeDirectory(package + "/old/inner")
        try Files.write(package + "/old/inner/f", "f")
        try Files.write(package + "/b.txt", "old b")
        try Files.makeDirectory(package + "/.pkgtool/tmp")
        try Files.write(package + "/.pkgtool/tmp/n1", "a")
        try Files.write(package + "/.pkgtool/tmp/n2", "new b")
        let location = try PackageLocation(package)
        let journal = SaveJournal(binding: SaveJournal.Binding(root: 0, temporaryDirectory: 0), operations: Self.operations)
        let root = try FileDescriptor.openDirectory(package)
        #expect(try journal.apply(root: root, package: location, durability: .none) == 3)
        let once = try Trees.contentHash(package)
        #expect(try journal.apply(root: root, package: location, durability: .none) == 0)
        #expect(try Trees.contentHash(package) == once)
        #expect(try Files.read(package + "/b.txt") == Array("new b".utf8))
        #expect(try FileSystem.status(package + "/new").permissions == 0o555)
        #expect(try FileSystem.statusIfExists(package + "/old") == nil)
    }
}
