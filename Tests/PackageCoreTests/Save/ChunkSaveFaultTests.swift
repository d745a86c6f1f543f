import PackageTestSupport
import Testing
@testable import PackageCore

/// The crash and error sweeps of Specs/save.md run over the two paths that save a large
/// file as its changed chunks: `journaled`'s patch in place, and the staged strategies'
/// clone of the old version on a file system with reflinks (a loop-mounted XFS image, the
/// sources on the temporary directory's file system). The oracle is the same: old or new,
/// by root hash, and a manifest (chunk lists included) that describes the package.
///
/// Serialized: each sweep keeps a thread of Swift's cooperative pool for a minute or more,
/// and on two cores several at once would leave none for the suites whose work is async
/// (the sync tests' transfers then stall until their deadlines).
@Suite("Chunk-level saves under crashes and errors", .serialized)
struct ChunkSaveFaultTests {
    /// The swept fixture's media file: above the chunking threshold, so that its 64 KiB edit
    /// is saved as one or two changed chunks, and small enough to save a few hundred times.
    static let sweptMediaSize = (8 << 20) + 100

    @Test("a crash at every step of a patching save, and during its recovery: old or new, never a mix")
    func crashSweep() throws {
        let fixture = try CrashConsistencyTests.Fixture(mediaSize: Self.sweptMediaSize, editsMedia: true)
        let sweep = try CrashConsistencyTests.sweepCrashes(fixture, mode: SaveMode(strategy: .journaled))
        #expect(sweep.statistics.filesPatched == 1, "the swept save patches the media file")
        print(
            "chunk patch crash sweep: \(sweep.points) crash points in the save, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    @Test("an error at each step of a patching save (EIO once, ENOSPC from then on): old or new, and the next save ends sound")
    func errorSweep() throws {
        let fixture = try CrashConsistencyTests.Fixture(mediaSize: Self.sweptMediaSize, editsMedia: true)
        let sweep = try CrashConsistencyTests.sweepErrors(fixture, mode: SaveMode(strategy: .journaled))
        #expect(sweep.statistics.filesPatched == 1, "the swept save patches the media file")
        print("chunk patch error injection: \(sweep.points) faults, \(sweep.violations.count) violations")
        #expect(sweep.violations.isEmpty, "\(sweep.violations.prefix(3))")
    }

    /// The strategies that clone a changed large file where the file system has reflinks.
    static let cloningModes = [
        SaveMode(strategy: .atomic), SaveMode(strategy: .atomic, keepsPrevious: true), SaveMode(strategy: .full),
    ]

    /// Runs `sweep` over the media-edit fixture with its packages on a fresh XFS image, and
    /// checks that the swept save cloned the media file and broke nothing (the tests that
    /// call it run only where an XFS image can be mounted, and always in CI).
    static func sweepOnXFS(
        _ mode: SaveMode, _ sweep: (CrashConsistencyTests.Fixture, SaveMode) throws -> CrashConsistencyTests.Sweep
    ) throws -> CrashConsistencyTests.Sweep {
        let xfs = try #require(LoopMount.xfs(), "an XFS image could not be mounted")
        let fixture = try CrashConsistencyTests.Fixture(mediaSize: sweptMediaSize, editsMedia: true, packagesIn: xfs.path)
        let result = try withExtendedLifetime(xfs) { try sweep(fixture, mode) }
        #expect(result.statistics.filesCloned == 1, "the swept save clones the media file")
        #expect(result.violations.isEmpty, "\(result.violations.prefix(3))")
        return result
    }

    @Test("on XFS, a crash at every step of a cloning save, and during its recovery: old or new, never a mix",
          .enabled(if: Prerequisite.runs(Prerequisite.canMountXFS), "needs root, mkfs.xfs and a loop device"),
          arguments: cloningModes)
    func reflinkCrashSweep(_ mode: SaveMode) throws {
        let sweep = try Self.sweepOnXFS(mode, CrashConsistencyTests.sweepCrashes)
        print(
            "reflink crash sweep (\(mode)) on XFS: \(sweep.points) crash points in the save, \(sweep.recoveryCrashes) during recovery, \(sweep.violations.count) violations")
    }

    @Test("on XFS, an error at each step of a cloning save (EIO once, ENOSPC from then on): the old package intact",
          .enabled(if: Prerequisite.runs(Prerequisite.canMountXFS), "needs root, mkfs.xfs and a loop device"),
          arguments: cloningModes)
    func reflinkErrorSweep(_ mode: SaveMode) throws {
        let sweep = try Self.sweepOnXFS(mode, CrashConsistencyTests.sweepErrors)
        print("reflink error injection (\(mode)) on XFS: \(sweep.points) faults, \(sweep.violations.count) violations")
    }
}
