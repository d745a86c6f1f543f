import Foundation
import Glibc
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageCore

/// What the metadata fuzzer (`Scripts/fuzz metadata`, Fuzz/MetadataFuzzer) found, each as
/// the smallest case that shows it, with the public API.
@Suite("Metadata fuzzer findings")
struct MetadataFuzzFindingsTests {
    /// A package whose manifest says `out` is a folder while a link leading out of the
    /// package stands there: what a forged manifest says, and what an edit behind pkgtool's
    /// back leaves. (Fuzz input: the seed `source-manifest-save-1`.)
    static func packageWithLinkWhereManifestHasFolder(_ directory: TemporaryDirectory) throws -> (
        source: String, package: String, outsideFile: String
    ) {
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        let outside = directory.url("outside")
        try Files.makeDirectory(source + "/out/sub")
        try Files.write(source + "/out/sub/deep", "the same bytes inside and outside\n")
        try Files.write(source + "/a.txt", "alpha\n")
        try Files.makeDirectory(outside + "/sub")
        try Files.write(outside + "/sub/deep", "the same bytes inside and outside\n")
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 1)
        try PackageSaver.save(DirectorySource(source), to: package, options: options)
        try FileSystem.removeTree(package + "/out")
        try Files.symlink(package + "/out", to: "../outside")
        // A change elsewhere, so that the next save has something to do.
        try Files.write(source + "/a.txt", "alpha, edited\n")
        return (source, package, outside + "/sub/deep")
    }

    @Test(
        "a save never hard-links a file from outside the package through a link where the manifest has a folder",
        arguments: [SaveStrategy.atomic, .journaled, .full], [true, false])
    func noLinkFromOutside(strategy: SaveStrategy, trustManifest: Bool) throws {
        let directory = try TemporaryDirectory("fuzz-finding-link")
        let (source, package, outsideFile) = try Self.packageWithLinkWhereManifestHasFolder(directory)
        let before = try FileSystem.status(outsideFile)
        let options = SaveOptions(strategy: strategy, durability: .none, workers: 1, trustManifest: trustManifest)
        _ = try? PackageSaver.save(DirectorySource(source), to: package, options: options)
        let after = try FileSystem.status(outsideFile)
        #expect(after.linkCount == 1, "the file outside was hard-linked into the package")
        #expect(after.changeTime == before.changeTime, "the file outside was touched")
    }

    /// Opens the FIFO at `path` for writing once, after three seconds, if a reader is blocked
    /// on it (a writer appearing unblocks the reader's open, its close ends the reader's
    /// read): keeps a regression from hanging the suite, and says whether it had to.
    final class FIFOWatchdog: Sendable {
        private let unblocked = Mutex(false)
        var hadToUnblock: Bool { unblocked.withLock { $0 } }

        init(_ path: String) {
            Thread.detachNewThread { [self] in
                sleep(3)
                // Marked first: the reader may look the moment the open below lets it go.
                unblocked.withLock { $0 = true }
                // O_NONBLOCK: with no reader waiting, this fails (ENXIO) instead of blocking.
                let descriptor = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
                guard descriptor >= 0 else {
                    unblocked.withLock { $0 = false }
                    return
                }
                close(descriptor)
            }
        }
    }

    @Test(
        "a manifest file that is a FIFO is refused at once, not waited on (it hung every reading command)",
        arguments: ["index", "delta.000002"])
    func fifoManifestIsRefused(name: String) throws {
        let directory = try TemporaryDirectory("fuzz-finding-fifo")
        let package = directory.url("doc.pkg")
        try Files.makeDirectory(package + "/.pkgtool")
        try Files.write(package + "/a.txt", "alpha\n")
        if name != "index" {
            let source = directory.url("src")
            try Files.makeDirectory(source)
            try Files.write(source + "/a.txt", "alpha\n")
            try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none, workers: 1))
        }
        let fifo = package + "/.pkgtool/" + name
        #expect(mkfifo(fifo, 0o644) == 0)
        let watchdog = FIFOWatchdog(fifo)
        #expect(throws: ManifestError.self) { try PackageManifest.load(packagePath: package) }
        #expect(!watchdog.hadToUnblock, "loading the manifest waited for a writer on the FIFO")
        // A reading command too: through PackageAccess, which recovers only when it sees a reason.
        let reader = FIFOWatchdog(fifo)
        _ = try? PackageAccess.reading(package) { try PackageManifest.load(packagePath: package) }
        #expect(!reader.hadToUnblock, "a reading command waited for a writer on the FIFO")
    }

    @Test("a delta claiming more entries than an Int holds is refused, not a trap (it crashed every reading command)")
    func hugeEntryCountIsRefused() throws {
        let directory = try TemporaryDirectory("fuzz-finding-entry-count")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        try Files.makeDirectory(source)
        try Files.write(source + "/a.txt", "alpha\n")
        let options = SaveOptions(durability: .none, workers: 1)
        try PackageSaver.save(DirectorySource(source), to: package, options: options)
        try Files.write(source + "/b.txt", "beta\n")
        try PackageSaver.save(DirectorySource(source), to: package, options: options)
        let metadata = package + "/.pkgtool/"
        let deltas = try Trees.names(metadata).filter { $0.hasPrefix(PackageLayout.deltaFilePrefix) }
        #expect(!deltas.isEmpty, "the saves wrote no delta")
        for name in deltas {
            // The delta header's entry count (Specs/manifest.md: at byte 96), then its checksum.
            var bytes = try Files.read(metadata + name)
            for offset in 96..<104 { bytes[offset] = 0xFF }
            let checksum = bytes.withUnsafeBytes { ContentHash.of(UnsafeRawBufferPointer(rebasing: $0[..<($0.count - 16)])) }
            bytes.replaceSubrange((bytes.count - 16)..., with: checksum.canonicalBytes)
            try FileSystem.remove(metadata + name)
            try Files.write(metadata + name, bytes)
        }
        #expect(throws: ManifestError.self) { try PackageManifest.load(packagePath: package) }
    }
}
