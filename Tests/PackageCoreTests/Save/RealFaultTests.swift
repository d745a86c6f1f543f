import Foundation
import Glibc
import PackageTestSupport
import PackageTestTraits
import Synchronization
import Testing
@testable import PackageCore

/// Real faults, no injection where the machine allows (issue "Real faults"): a save that
/// reports success has saved the source, and no fault leaves a package every command refuses.
@Suite("Real faults", .serialized)
struct RealFaultTests {
    /// A tmpfs of `size` mounted over a fresh directory, when the test can mount one (root);
    /// nil otherwise. Unmounted when the value goes.
    final class ScratchMount {
        let directory: TemporaryDirectory
        var path: String { directory.path }
        private init(_ directory: TemporaryDirectory) { self.directory = directory }
        deinit { umount2(directory.path, 2) }

        static func tmpfs(size: String) -> ScratchMount? {
            guard getuid() == 0, let directory = try? TemporaryDirectory("tmpfs"),
                mount("tmpfs", directory.path, "tmpfs", 0, "size=\(size)") == 0
            else { return nil }
            return ScratchMount(directory)
        }
    }

    /// Every mode a save can run in.
    static let modes: [SaveMode] = SaveMode.all

    /// Version `k` of the rewritten file: every 1 MiB chunk filled with one byte, `k`'s.
    static func versionByte(_ k: Int) -> UInt8 { UInt8(1 + k % 250) }

    /// Whether `bytes` is a state a file rewritten front to back, from one version to the
    /// next, held at some moment: a prefix of version k+1 over the rest of version k.
    static func heldAtSomeMoment(_ bytes: [UInt8], chunk: Int) -> Bool {
        guard let first = bytes.first else { return false }
        guard let change = bytes.firstIndex(where: { $0 != first }) else { return true }
        let rest = bytes[change]
        let older: UInt8 = first == 1 ? 250 : first - 1
        return bytes[change...].allSatisfy { $0 == rest } && rest == older
    }

    @Test("10 rounds of a writer rewriting a 20 MiB source file in place while saves run, every strategy: refused or a state it held; verify passes")
    func sameSizeRewriteDuringSave() throws {
        try Self.rewriteDuringSave(rounds: 10)
    }

    /// The same race for ten times as many rounds: more interleavings, nothing else.
    @Test("100 rounds of a writer rewriting a 20 MiB source file in place while saves run, every strategy", Stress.loop)
    func stressSameSizeRewriteDuringSave() throws {
        try Self.rewriteDuringSave(rounds: 100)
    }

    /// Saves, `rounds` times per mode, a source whose 20 MiB file a writer thread keeps
    /// rewriting in place: each save is refused or holds a state the file held, with a
    /// manifest that describes it.
    static func rewriteDuringSave(rounds: Int) throws {
        let mount = ScratchMount.tmpfs(size: "400m")
        let fallback = mount == nil ? try TemporaryDirectory("rewrite") : nil
        let base = mount?.path ?? fallback!.path
        let chunk = 1 << 20
        let size = 20 * chunk
        var refused = 0
        var saved = 0
        for mode in Self.modes {
            let source = base + "/src-\(mode.strategy)\(mode.keepsPrevious ? "-keep" : "")"
            let package = source + ".pkg"
            try Files.makeDirectory(source)
            try Files.write(source + "/note.txt", "a small file beside")
            try Files.write(source + "/media.bin", [UInt8](repeating: Self.versionByte(0), count: size))
            let options = SaveOptions(strategy: mode.strategy, durability: .none, keepsPrevious: mode.keepsPrevious)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)

            // The writer: rewrites the file in place, chunk by chunk, version after version.
            let stop = StopFlag()
            let writerDone = DispatchSemaphore(value: 0)
            let writer = Thread {
                defer { writerDone.signal() }
                let file = open(source + "/media.bin", O_WRONLY)
                defer { close(file) }
                var buffer = [UInt8](repeating: 0, count: chunk)
                var version = 1
                while !stop.isRaised {
                    for index in buffer.indices { buffer[index] = Self.versionByte(version) }
                    for index in 0..<(size / chunk) {
                        _ = buffer.withUnsafeBytes { pwrite(file, $0.baseAddress, chunk, off_t(index * chunk)) }
                        if index % 4 == 3 { usleep(200) }
                    }
                    version += 1
                }
            }
            writer.start()
            defer { stop.raise() }
            for round in 1...rounds {
                do {
                    _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
                    saved += 1
                    let bytes = try Files.read(package + "/media.bin")
                    #expect(Self.heldAtSomeMoment(bytes, chunk: chunk), "\(mode) round \(round): bytes the file never held")
                    let manifest = try #require(try PackageManifest.load(packagePath: package))
                    let rescan = try PackageScan.scan(package, useManifest: false)
                    #expect(
                        TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).isEmpty,
                        "\(mode) round \(round): the manifest does not describe what was written")
                } catch let refusal as SaveRefusal {
                    refused += 1
                    #expect(refusal.description.contains("changed while it was being saved"), "\(refusal)")
                }
            }
            stop.raise()
            writerDone.wait()
        }
        print("rewrite during save: \(saved) saved, \(refused) refused (\(Self.modes.count) modes × \(rounds) rounds)")
    }

    @Test("a truncated last delta: the save rebuilds the whole manifest, verify passes, the next save is incremental")
    func truncatedDelta() throws {
        let home = try TemporaryDirectory("truncated-delta")
        let source = home.url("src")
        let package = home.url("doc.pkg")
        try makeDocument(source, pages: 12, mediaSize: 64 << 10)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
        try Files.write(source + "/pages/3.txt", "edited once")
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
        let metadata = package + "/.pkgtool"
        let delta = try #require(try Trees.names(metadata).filter { $0.hasPrefix("delta.") }.last)
        let bytes = try Files.read(metadata + "/" + delta)
        try Files.write(metadata + "/" + delta, Array(bytes.prefix(bytes.count / 2)))

        let repair = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
        #expect(repair.statistics.manifestRebuilt)
        #expect(try Trees.names(metadata).filter { $0.hasPrefix("delta.") }.count <= 1)
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        #expect(manifest.snapshot.rootHash == (try Trees.contentHash(source)))
        let next = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
        #expect(next.statistics.unchanged && next.statistics.filesHashed == 0)
    }

    @Test("a journal applied halfway, then lost: the next save checks the package and makes it its source")
    func lostJournal() throws {
        let home = try TemporaryDirectory("lost-journal")
        let old = home.url("old")
        let new = home.url("new")
        try makeDocument(old, pages: 10, mediaSize: 64 << 10)
        try makeDocument(new, pages: 10, mediaSize: 64 << 10)
        try changeDocument(new)
        let package = home.url("doc.pkg")
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 1)
        // Count the steps, then stop a save two steps after its journal is committed.
        let counting = home.url("counting.pkg")
        _ = try PackageSaver.save(DirectorySource(old), to: counting, options: options)
        let recorder = StepRecorder()
        try IOFaultInjection.withInjector(recorder) { _ = try PackageSaver.save(DirectorySource(new), to: counting, options: options) }
        let commit = try #require(recorder.mutations.firstIndex { $0.step == .rename && $0.path.contains("journal") })
        _ = try PackageSaver.save(DirectorySource(old), to: package, options: options)
        #expect(throws: (any Error).self) {
            try IOFaultInjection.withInjector(CrashAfter(commit + 3)) {
                _ = try PackageSaver.save(DirectorySource(new), to: package, options: options)
            }
        }
        // The journal is lost (someone cleaned up by hand): the package is a mix now.
        try FileSystem.remove(package + "/.pkgtool/journal")
        let outcome = try PackageSaver.save(DirectorySource(new), to: package, options: options)
        #expect(outcome.statistics.notes.contains { $0.contains("checked the package") }, "\(outcome.statistics.notes)")
        #expect(try Trees.contentHash(package) == (try Trees.contentHash(new)))
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        #expect(TreeDiff.changes(from: manifest.snapshot, to: try PackageScan.scan(package, useManifest: false).snapshot).isEmpty)
    }

    @Test(
        "a full disk under journaled: the failed save's temporaries are gone at once, the old package intact",
        .enabled(if: Prerequisite.runs(Prerequisite.canMountTmpfs), "mounting a tmpfs needs root"))
    func fullDiskReturnsSpace() throws {
        let mount = try #require(ScratchMount.tmpfs(size: "8m"), "a tmpfs could not be mounted")
        let source = try TemporaryDirectory("fulldisk-src")
        try Files.makeDirectory(source.url("media"))
        try Files.writeRandom(source.url("media/a.bin"), size: 3 << 20, seed: 1)
        let package = mount.path + "/doc.pkg"
        _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: SaveOptions(strategy: .journaled))
        let before = try Trees.contentHash(package)
        try Files.writeRandom(source.url("media/b.bin"), size: 6 << 20, seed: 2)
        #expect {
            _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: SaveOptions(strategy: .journaled))
        } throws: { error in
            (error as? FileSystemError)?.errno == .noSpace && "\(error)".contains(package + "/media/b.bin")
        }
        #expect(try Trees.contentHash(package) == before)
        #expect(try Trees.names(package + "/.pkgtool/tmp") == [], "the partial temporary stays until the next command")
    }

    /// Growing a large file by its changed chunks needs room in the package's own file too:
    /// the journal's patches reserve it before the commit, so a full disk fails the save
    /// cleanly — the package stays the old version and verifies — never halfway through.
    @Test(
        "a journaled save that grows a large file on a nearly full disk fails before its commit",
        .enabled(if: Prerequisite.runs(Prerequisite.canMountTmpfs), "mounting a tmpfs needs root"))
    func growthOnAFullDiskFailsBeforeTheCommit() throws {
        let mount = try #require(ScratchMount.tmpfs(size: "48m"), "a tmpfs could not be mounted")
        let source = try TemporaryDirectory("growth-src")
        try Files.makeDirectory(source.url("media"))
        try Files.writeRandom(source.url("media/movie.bin"), size: 16 << 20, seed: 1)
        let package = mount.path + "/doc.pkg"
        let options = SaveOptions(strategy: .journaled)
        _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: options)
        let before = try Trees.contentHash(package)
        // Leave about 12 MiB free: the 8 MiB of new data fit among the temporaries, but
        // not a second time in the grown file.
        var statistics = statvfs()
        #expect(statvfs(mount.path, &statistics) == 0)
        let free = Int(statistics.f_bavail) * Int(statistics.f_frsize)
        try Files.writeRandom(mount.path + "/ballast", size: max(0, free - (12 << 20)), seed: 9)
        let grown = try FileDescriptor.open(source.url("media/movie.bin"), access: .writeOnly, options: [.append])
        var generator = SeededBytes(seed: 3)
        for _ in 0..<8 { try generator.bytes(1 << 20).withUnsafeBytes { try grown.write($0) } }
        try grown.close()

        #expect {
            _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: options)
        } throws: { error in
            (error as? FileSystemError)?.errno == .noSpace
        }
        #expect(try FileSystem.statusIfExists(package + "/.pkgtool/journal") == nil, "nothing was committed")
        #expect(try Trees.contentHash(package) == before, "the old version, whole")
        let scan = try PackageScan.scan(package, workers: 1)
        #expect(scan.manifest?.snapshot.rootHash == before, "the manifest still describes it")
        // Room made, the same save goes through.
        try FileSystem.remove(mount.path + "/ballast")
        _ = try PackageSaver.save(DirectorySource(source.path), to: package, options: options)
        #expect(try Trees.contentHash(package) == Trees.contentHash(source.path))
    }

    @Test("errors name the package path, not an internal temporary or staging name")
    func errorsNameUserPaths() throws {
        let fixture = try CrashConsistencyTests.Fixture()
        for strategy in SaveStrategy.allCases {
            let (home, package) = try fixture.freshPackage("names", strategy: strategy)
            defer { withExtendedLifetime(home) {} }
            for step in [IOStep.write, .create] {
                #expect {
                    try IOFaultInjection.withInjector(FailNth(step, index: 1, error: .noSpace)) {
                        _ = try PackageSaver.save(DirectorySource(fixture.newSource), to: package, options: fixture.options(strategy))
                    }
                } throws: { error in
                    let text = "\(error)"
                    return text.contains("'\(package)/") && !text.contains("staging") && !text.contains("'n1'")
                }
            }
        }
    }

    @Test("a 255-byte package name saves with every strategy; its siblings' names stay short")
    func longNames() throws {
        let home = try TemporaryDirectory("long-name")
        let source = home.url("src")
        try makeDocument(source, pages: 3, mediaSize: 4096)
        for mode in Self.modes {
            let name = String(repeating: "é", count: 125) + "\(mode.strategy)".prefix(1) + (mode.keepsPrevious ? "k" : "p") + "x"
            // 250 bytes of é, and three ASCII: 253; pad to exactly 255.
            let padded = name + String(repeating: "z", count: 255 - name.utf8.count)
            #expect(padded.utf8.count == 255)
            let package = home.url(padded)
            let options = SaveOptions(strategy: mode.strategy, durability: .none, keepsPrevious: mode.keepsPrevious)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
            try Files.write(source + "/pages/1.txt", "edited for \(mode)")
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), "\(mode)")
            for sibling in try Trees.names(home.path) { #expect(sibling.utf8.count <= 255) }
        }
        #expect(SiblingNames(forName: String(repeating: "x", count: 255)).newStaging().utf8.count < 100)
    }

    /// 5 GiB: past 4 GiB, where 32-bit sizes and offsets would wrap (8 GiB only read more zeros).
    @Test("a 5 GiB sparse file keeps its holes in the package (about its data's blocks), and hashes as the zeros it reads as")
    func sparseFiles() throws {
        let home = try TemporaryDirectory("sparse")
        let source = home.url("src")
        try Files.makeDirectory(source)
        let path = source + "/disk.img"
        let file = open(path, O_CREAT | O_WRONLY, 0o644)
        defer { close(file) }
        let data = [UInt8](repeating: 0xAB, count: 1 << 20)
        let offsets: [Int64] = [0, 3 << 30, (5 << 30) - (1 << 20)]
        for offset in offsets {
            let written = data.withUnsafeBytes { raw -> Int in pwrite(file, raw.baseAddress, raw.count, off_t(offset)) }
            #expect(written == data.count)
        }
        #expect(ftruncate(file, 5 << 30) == 0)
        let sourceHash = try Trees.contentHash(source)
        for strategy in [SaveStrategy.journaled, .atomic] {
            let package = home.url("\(strategy).pkg")
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(strategy: strategy, durability: .none))
            var info = stat()
            #expect(stat(package + "/disk.img", &info) == 0)
            #expect(info.st_size == 5 << 30)
            #expect(Int64(info.st_blocks) * 512 < 16 << 20, "\(strategy): \(Int64(info.st_blocks) * 512) bytes allocated")
            #expect(try Trees.contentHash(package) == sourceHash, "\(strategy)")
        }
    }

    @Test(
        "a journal committed but blocked by an immutable folder: readers answer, the save names the folder, and finishes once it is writable",
        .enabled(if: Prerequisite.runs(Prerequisite.canMakeImmutable), "needs root and chattr +i"))
    func committedButBlocked() throws {
        let home = try TemporaryDirectory("blocked")
        try #require(chattrWorks(in: home.path), "chattr +i does not work here")
        let old = home.url("old")
        let new = home.url("new")
        try makeDocument(old, pages: 6, mediaSize: 4096)
        try makeDocument(new, pages: 6, mediaSize: 4096)
        try Files.write(new + "/pages/3.txt", "page three, rewritten")
        let package = home.url("doc.pkg")
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 1)
        _ = try PackageSaver.save(DirectorySource(old), to: package, options: options)
        // Stop right after the commit, then put an obstacle in the journal's way.
        let recorder = StepRecorder()
        let counting = home.url("counting.pkg")
        _ = try PackageSaver.save(DirectorySource(old), to: counting, options: options)
        try IOFaultInjection.withInjector(recorder) { _ = try PackageSaver.save(DirectorySource(new), to: counting, options: options) }
        let commit = try #require(recorder.mutations.firstIndex { $0.step == .rename && $0.path.contains("journal") })
        #expect(throws: (any Error).self) {
            try IOFaultInjection.withInjector(CrashAfter(commit + 1)) {
                _ = try PackageSaver.save(DirectorySource(new), to: package, options: options)
            }
        }
        #expect(try FileSystem.statusIfExists(package + "/.pkgtool/journal") != nil)
        #expect(chattr("+i", package + "/pages"))
        defer { _ = chattr("-i", package + "/pages") }

        var warnings: [String] = []
        let listed = try PackageAccess.reading(package, warn: { warnings.append($0) }) { try Trees.names(package + "/pages") }
        #expect(!listed.isEmpty)
        #expect(warnings.contains { $0.contains("unfinished") }, "\(warnings)")
        #expect {
            _ = try PackageSaver.save(DirectorySource(new), to: package, options: options)
        } throws: { error in
            "\(error)".contains(package + "/pages") && "\(error)".contains("could not be finished")
        }
        #expect(chattr("-i", package + "/pages"))
        _ = try PackageSaver.save(DirectorySource(new), to: package, options: options)
        #expect(try Trees.contentHash(package) == (try Trees.contentHash(new)))
    }

    @Test(
        "an immutable folder in the tree a full or atomic save replaces: the save succeeds, readers answer, the litter goes once it is writable",
        .enabled(if: Prerequisite.runs(Prerequisite.canMakeImmutable), "needs root and chattr +i"))
    func immutableFolderInReplacedTree() throws {
        let home = try TemporaryDirectory("immutable-old")
        try #require(chattrWorks(in: home.path), "chattr +i does not work here")
        let source = home.url("src")
        try makeDocument(source, pages: 4, mediaSize: 4096)
        for strategy in [SaveStrategy.full, .atomic] {
            let package = home.url("\(strategy).pkg")
            let options = SaveOptions(strategy: strategy, durability: .none)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(chattr("+i", package + "/attic"))
            try Files.write(source + "/pages/1.txt", "edited, \(strategy)")
            let outcome = try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(outcome.statistics.notes.contains { $0.contains("could not be removed") }, "\(outcome.statistics.notes)")
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)))
            var warnings: [String] = []
            _ = try PackageAccess.reading(package, warn: { warnings.append($0) }) { try Trees.contentHash(package) }
            let litter = try Trees.names(home.path).first { SiblingNames(forName: "\(strategy).pkg").role(of: $0) != nil }
            let leftover = try #require(litter)
            #expect(chattr("-i", home.url(leftover) + "/attic"))
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
            #expect(try !Trees.names(home.path).contains(leftover))
        }
    }

    func chattrWorks(in directory: String) -> Bool {
        guard getuid() == 0, which("chattr") != nil else { return false }
        let probe = directory + "/.chattr-probe"
        guard (try? Files.makeDirectory(probe)) != nil, chattr("+i", probe) else { return false }
        _ = chattr("-i", probe)
        try? FileSystem.removeTree(probe)
        return true
    }

    func chattr(_ flag: String, _ path: String) -> Bool {
        (try? runProgram(which("chattr") ?? "/usr/bin/chattr", [flag, path]).status) == 0
    }
}

/// Records every mutating step (kind and path) of the I/O it sees.
final class StepRecorder: IOFaultInjector {
    private let steps = Mutex<[(step: IOStep, path: String)]>([])
    func fault(before step: IOStep, path: String) -> InjectedFault? {
        if step.isMutation { steps.withLock { $0.append((step, path)) } }
        return nil
    }
    var mutations: [(step: IOStep, path: String)] { steps.withLock { $0 } }
}

/// A flag one thread raises and another polls.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)
    func raise() { raised.store(true, ordering: .relaxed) }
    var isRaised: Bool { raised.load(ordering: .relaxed) }
}
