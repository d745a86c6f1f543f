import Synchronization
import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// `sync`: two devices editing one package meet through the remote; disjoint edits merge,
/// the same file edited on both keeps the local version in the tree and the other as a
/// conflict version inside the package (Specs/remote.md, "Sync", "Conflict versions").
@Suite("Sync and merge") struct SyncMergeTests {
    /// Device A pushes a package, device B pulls it: two packages on one base.
    static func twoDevices(_ fixture: RemoteFixture, pages: Int = 6) throws -> (a: String, b: String) {
        let a = try fixture.makePackage("device-a", pages: pages, mediaSize: 5000)
        _ = try PackageRemote.push(a, to: fixture.location, options: fixture.options(device: "a"))
        let b = fixture.path("device-b")
        _ = try PackageRemote.pull(fixture.location, to: b, options: fixture.options(device: "b"))
        return (a, b)
    }

    @Test func aConflictsRecordRoundTripsAndNothingElseDecodes() throws {
        let version = String(repeating: "ab", count: 32)
        let list = ConflictList([
            ConflictVersion(
                path: "b/caf\u{e9} x\n.txt", side: .other, kind: .file, permissions: 0o644, size: 3,
                hash: ContentHash.of(Array("abc".utf8)), linkTarget: nil, remoteVersion: version, time: 1_796_183_450_123_000_000),
            ConflictVersion(
                path: "a", side: .local, kind: .deleted, permissions: 0, size: 0, hash: ContentHash(high: 0, low: 0),
                linkTarget: nil, remoteVersion: version, time: 0),
            ConflictVersion(
                path: "l", side: .other, kind: .link, permissions: 0o777, size: 1, hash: ContentHash.of(Array("t".utf8)),
                linkTarget: "t", remoteVersion: version, time: 5),
        ])
        #expect(try ConflictList.decode(list.encoded()) == list)
        let good = String(decoding: list.encoded(), as: UTF8.self)
        let pkgtoolPath = ConflictVersion.hex(".pkgtool/sync")
        let bad: [String] = [
            "", "pkgtool-conflicts 2\n", String(good.dropLast()), good + "other file 644 1\n",
            good.replacingOccurrences(of: " 644 ", with: " 0644 "),
            good.replacingOccurrences(of: " 3 ", with: " 03 "),
            good.replacingOccurrences(of: version, with: version.uppercased()),
            good.replacingOccurrences(of: ConflictVersion.hex("a"), with: pkgtoolPath),
            good.replacingOccurrences(of: ConflictVersion.hex("a"), with: ConflictVersion.hex("../a")),
            good.replacingOccurrences(of: "\n", with: "\r\n"),
        ]
        for text in bad {
            #expect(throws: ConflictListRefusal.self, "\(text.debugDescription)") { try ConflictList.decode(Array(text.utf8)) }
        }
        // With a base version: format 2, bases after the conflict versions; nothing else decodes.
        let baseVersion = ConflictVersion(
            path: "b/caf\u{e9} x\n.txt", side: .base, kind: .file, permissions: 0o644, size: 4,
            hash: ContentHash.of(Array("base".utf8)), linkTarget: nil, remoteVersion: version, time: 2)
        let withBase = list.adding([baseVersion])
        #expect(withBase.versions == list.versions && withBase.bases == [baseVersion])
        #expect(try ConflictList.decode(withBase.encoded()) == withBase)
        #expect(withBase.base(at: "b/caf\u{e9} x\n.txt") == baseVersion && withBase.base(at: "b/cafe\u{301} x\n.txt") == nil)
        #expect(withBase.removing(under: "b").bases.isEmpty)
        let two = String(decoding: withBase.encoded(), as: UTF8.self)
        #expect(two.hasPrefix("pkgtool-conflicts 2\n") && good.hasPrefix("pkgtool-conflicts 1\n"))
        var lines = two.split(separator: "\n").map(String.init)
        let baseLine = lines.removeLast()
        for text in [
            two.replacingOccurrences(of: "pkgtool-conflicts 2", with: "pkgtool-conflicts 1"),  // a base line in format 1
            ([lines[0], baseLine] + lines.dropFirst()).joined(separator: "\n") + "\n",  // a base line first
            lines.joined(separator: "\n").replacingOccurrences(of: "pkgtool-conflicts 1", with: "pkgtool-conflicts 2") + "\n",
        ] {
            #expect(throws: ConflictListRefusal.self, "\(text.debugDescription)") { try ConflictList.decode(Array(text.utf8)) }
        }
    }

    @Test func disjointEditsEndUpOnBothDevices() throws {
        let fixture = try RemoteFixture("merge-disjoint")
        let (a, b) = try Self.twoDevices(fixture)
        try Files.write(a + "/pages/a/page0.json", "edited on a\n")
        try Files.write(a + "/new-on-a.txt", "new on a\n")
        try Files.write(b + "/pages/b/page1.json", "edited on b\n")
        #expect(unlink(b + "/run.sh") == 0)

        let first = try PackageRemote.sync(a, with: fixture.location, options: fixture.options(device: "a"))
        #expect(first.action == .pushed)
        let second = try PackageRemote.sync(b, with: nil, options: fixture.options(device: "b"))
        #expect(second.action == .merged)
        #expect(second.conflicts.isEmpty)
        #expect(second.version.sequence == 3)
        let third = try PackageRemote.sync(a, with: nil, options: fixture.options(device: "a"))
        #expect(third.action == .pulled)
        for package in [a, b] {
            #expect(try Files.read(package + "/pages/a/page0.json") == Array("edited on a\n".utf8))
            #expect(try Files.read(package + "/new-on-a.txt") == Array("new on a\n".utf8))
            #expect(try Files.read(package + "/pages/b/page1.json") == Array("edited on b\n".utf8))
            #expect(try FileSystem.statusIfExists(package + "/run.sh") == nil)
        }
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(b))
        let again = try PackageRemote.sync(b, with: nil, options: fixture.options(device: "b"))
        #expect(again.action == .upToDate)
    }

    @Test func theSamePageEditedOnBothKeepsLocalAndListsOther() throws {
        let fixture = try RemoteFixture("merge-conflict")
        let (a, b) = try Self.twoDevices(fixture)
        let baseBytes = try Files.read(a + "/metadata.json")
        try Files.write(a + "/metadata.json", "from a\n")
        try Files.write(b + "/metadata.json", "from b\n")
        try Files.write(b + "/pages/a/page2.json", "b only\n")
        _ = try PackageRemote.sync(a, with: fixture.location, options: fixture.options(device: "a"))
        let merged = try PackageRemote.sync(b, with: nil, options: fixture.options(device: "b"))
        #expect(merged.action == .merged)
        #expect(try Files.read(b + "/metadata.json") == Array("from b\n".utf8))
        let conflicts = try ConflictResolver.conflicts(of: b)
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.path == RelativePath("metadata.json"))
        #expect(conflict.side == .other)
        #expect(conflict.kind == .file)
        #expect(conflict.hash == ContentHash.of(Array("from a\n".utf8)))
        #expect(conflict.remoteVersion == merged.pulled?.version.id.description)
        // The other side's bytes are in the package, readable without the network.
        #expect(
            try Files.read(ConflictStore.contentPath(b, hash: conflict.hash, size: conflict.size)) == Array("from a\n".utf8))
        // What both sides last shared there is kept too, readable offline.
        let base = try #require(try ConflictResolver.base(of: conflict, in: b))
        #expect(base.side == .base && base.path == conflict.path)
        #expect(try Files.read(try #require(ConflictResolver.contentPath(of: base, in: b))) == baseBytes)
        let kept = try #require(ConflictResolver.contentPath(of: conflict, in: b))
        #expect(try Files.read(kept) == Array("from a\n".utf8))
        #expect(try Files.read(try #require(ConflictResolver.currentPath(of: conflict, in: b))) == Array("from b\n".utf8))
        // Nothing blocks: A syncs and gets B's edit; the tree holds B's version.
        let pulled = try PackageRemote.sync(a, with: nil, options: fixture.options(device: "a"))
        #expect(pulled.action == .pulled)
        #expect(try Files.read(a + "/metadata.json") == Array("from b\n".utf8))
        #expect(try Files.read(a + "/pages/a/page2.json") == Array("b only\n".utf8))

        // The conflict version survives a rename of the package.
        let renamed = fixture.path("device-b renamed")
        #expect(rename(b, renamed) == 0)
        #expect(try ConflictResolver.conflicts(of: renamed).count == 1)

        // --keep both: the other version beside it, the record gone.
        let day = CalendarDay(year: 2026, month: 12, day: 6)
        let both = try ConflictResolver.resolve(renamed, path: "metadata.json", keep: .both, day: day, host: "laptop")
        #expect(both.written == [RelativePath("metadata (conflict 2026-12-06 laptop).json")])
        #expect(try Files.read(renamed + "/metadata (conflict 2026-12-06 laptop).json") == Array("from a\n".utf8))
        #expect(try Files.read(renamed + "/metadata.json") == Array("from b\n".utf8))
        #expect(try ConflictResolver.conflicts(of: renamed).isEmpty)
        let synced = try PackageRemote.sync(renamed, with: nil, options: fixture.options(device: "b"))
        #expect(synced.action == .pushed)
        #expect(synced.conflicts.isEmpty)
    }

    /// A file the app knows how to merge (lines, union): both devices' edits end up in it,
    /// no conflict version; base's bytes reach the merge.
    @Test func aFileTheAppMergesIsMergedNotConflicted() throws {
        let fixture = try RemoteFixture("merge-contents")
        let (a, b) = try Self.twoDevices(fixture)
        let before = try Files.read(a + "/metadata.json")
        try Files.write(a + "/metadata.json", String(decoding: before, as: UTF8.self) + "tag: from a\n")
        try Files.write(b + "/metadata.json", String(decoding: before, as: UTF8.self) + "tag: from b\n")
        let sawBase = Mutex(false)
        let union = ContentMerge(path: "metadata.json") { _, base, local, other in
            sawBase.withLock { $0 = base == before }
            let mine = String(decoding: local, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            let theirs = String(decoding: other, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            return Array((mine + theirs.filter { !mine.contains($0) }).joined(separator: "\n").utf8)
        }
        var optionsA = fixture.options(device: "a")
        optionsA.contentMerge = union
        var optionsB = fixture.options(device: "b")
        optionsB.contentMerge = union
        _ = try PackageRemote.sync(a, with: fixture.location, options: optionsA)
        let merged = try PackageRemote.sync(b, with: nil, options: optionsB)
        #expect(merged.action == .merged)
        #expect(merged.newConflicts.isEmpty && merged.conflicts.isEmpty)
        #expect(merged.notes.contains { $0.contains("merged by the app") })
        #expect(sawBase.withLock { $0 }, "the merge got base's bytes")
        let text = String(decoding: try Files.read(b + "/metadata.json"), as: UTF8.self)
        #expect(text.contains("tag: from a") && text.contains("tag: from b"))
        #expect(try ConflictResolver.conflicts(of: b).isEmpty)
        let pulled = try PackageRemote.sync(a, with: nil, options: optionsA)
        #expect(pulled.action == .pulled)
        #expect(try Files.read(a + "/metadata.json") == Files.read(b + "/metadata.json"))
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(b))
    }

    @Test func keepOtherRestoresTheOtherVersion() throws {
        let fixture = try RemoteFixture("merge-keep-other")
        let (a, b) = try Self.twoDevices(fixture)
        try Files.write(a + "/pages/a/page0.json", "from a\n")
        try Files.write(b + "/pages/a/page0.json", "from b\n")
        _ = try PackageRemote.sync(a, with: fixture.location, options: fixture.options(device: "a"))
        // A copy made with cp -a syncs as the package it copies.
        let copy = fixture.path("copy-b")
        let status = Process.runToEnd("/bin/cp", ["-a", b, copy])
        #expect(status == 0)
        let merged = try PackageRemote.sync(copy, with: nil, options: fixture.options(device: "b"))
        #expect(merged.action == .merged)
        #expect(merged.conflicts.count == 1)
        #expect(throws: ConflictListRefusal.self) {
            try ConflictResolver.resolve(copy, path: "pages/b", keep: .other, day: CalendarDay(year: 2026, month: 1, day: 1), host: "h")
        }
        try ConflictResolver.resolve(
            copy, path: "pages/a/page0.json", keep: .other, day: CalendarDay(year: 2026, month: 1, day: 1), host: "h")
        #expect(try Files.read(copy + "/pages/a/page0.json") == Array("from a\n".utf8))
        #expect(try ConflictResolver.conflicts(of: copy).isEmpty)
        let pushed = try PackageRemote.sync(copy, with: nil, options: fixture.options(device: "b"))
        #expect(pushed.action == .pushed)
        let back = try PackageRemote.sync(a, with: nil, options: fixture.options(device: "a"))
        #expect(back.action == .upToDate)  // the copy went back to exactly what A pushed
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(copy))
    }

    /// Ten rounds of random edits on two devices, each syncing in turn: a referee checks
    /// that every edit survives, in the tree or as a listed conflict version.
    @Test(arguments: [UInt64(7), 20261206]) func randomEditsAreNeverLost(seed: UInt64) throws {
        let fixture = try RemoteFixture("merge-random-\(seed)")
        let (a, b) = try Self.twoDevices(fixture, pages: 4)
        var random = SeededBytes(seed: seed)
        let names = (0..<8).map { "notes/n\($0).txt" }
        try Files.makeDirectory(a + "/notes")
        _ = try PackageRemote.sync(a, with: fixture.location, options: fixture.options(device: "a"))
        _ = try PackageRemote.sync(b, with: nil, options: fixture.options(device: "b"))
        for round in 0..<20 {
            // What each device wrote last to each path this round (names are bytes).
            var written: [(device: String, path: String, bytes: [UInt8])] = []
            for (device, package) in [("a", a), ("b", b)] {
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let name = names[Int(random.next() % UInt64(names.count))]
                    let bytes = Array("round \(round) device \(device) \(random.next())\n".utf8)
                    try Files.write(package + "/" + name, bytes)
                    written.removeAll { $0.device == device && PathOrder.sameBytes($0.path, name) }
                    written.append((device, name, bytes))
                }
            }
            let order = random.next() % 2 == 0 ? [("a", a), ("b", b)] : [("b", b), ("a", a)]
            for (device, package) in order {
                _ = try PackageRemote.sync(package, with: fixture.location, options: fixture.options(device: device))
            }
            // The referee: the device that synced last has seen every edit of the round;
            // each is in its tree or listed, with its bytes, as a conflict version.
            let last = order[1].1
            let conflicts = try ConflictResolver.conflicts(of: last)
            for edit in written {
                let inTree = (try? Files.read(last + "/" + edit.path)) == edit.bytes
                let kept = conflicts.contains {
                    PathOrder.sameBytes($0.path.string, edit.path) && $0.hash == ContentHash.of(edit.bytes)
                        && (try? Files.read(ConflictStore.contentPath(last, hash: $0.hash, size: $0.size))) == edit.bytes
                }
                #expect(inTree || kept, "seed \(seed) round \(round): device \(edit.device)'s \(edit.path) was lost")
            }
        }
        // In the end both devices hold one tree.
        _ = try PackageRemote.sync(a, with: nil, options: fixture.options(device: "a"))
        _ = try PackageRemote.sync(b, with: nil, options: fixture.options(device: "b"))
        _ = try PackageRemote.sync(a, with: nil, options: fixture.options(device: "a"))
        #expect(try RemoteFixture.rootHash(a) == RemoteFixture.rootHash(b), "seed \(seed)")
    }

}

extension Process {
    /// Runs a program to its end; its exit status.
    static func runToEnd(_ program: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
