import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
@testable import PackageZip
import Testing

/// The default repack (`ZipPackOptions.appendsInPlace`): changed entries appended to the
/// existing archive in place, a new central directory declaring the dead ranges, and a
/// recovery record that makes a kill at any point leave the old archive or the new one.
@Suite("Repack appending in place")
struct AppendInPlaceTests {
    /// A packed sample tree (no fixed time: a fixed time asks for the rewrite).
    static func packed(_ label: String) throws -> (directory: TemporaryDirectory, source: String, output: String) {
        let directory = try TemporaryDirectory(label)
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 1_200_000)
        let output = directory.url("out.zip")
        let report = try ZipPacker.pack(source, to: output)
        #expect(!report.appendedInPlace)
        return (directory, source, output)
    }

    /// Unpacks `archive` and lists how it differs from `source` (nothing when equal).
    static func differences(_ archive: String, from source: String, scratch: TemporaryDirectory, _ name: String) throws
        -> [String]
    {
        let destination = scratch.url(name)
        _ = try ZipArchive.open(archive).extract(to: destination)
        defer { try? FileSystem.removeTree(destination) }
        return try treeDifferences(source, destination)
    }

    @Test("a small change is appended: the old bytes stay, dead ranges are declared, the archive verifies and unpacks to the source")
    func appends() throws {
        let (directory, source, output) = try Self.packed("zip-append")
        for round in 0..<3 {
            let before = try Files.read(output)
            try Files.write(source + "/pages/\(round).json", "edited \(round)")
            try Files.write(source + "/new-\(round).txt", "added")
            let report = try ZipPacker.pack(source, to: output)
            #expect(report.appendedInPlace)
            let after = try Files.read(output)
            #expect(after.count > before.count)
            #expect(Array(after.prefix(before.count)) == before, "round \(round): bytes below the old length changed")
            let archive = try ZipArchive.open(output)
            #expect(!archive.deadRanges.isEmpty)
            #expect(report.deadBytes == archive.deadRanges.reduce(0) { $0 + Int64($1.count) })
            try archive.verify()
            #expect(try Self.differences(output, from: source, scratch: directory, "out-\(round)") == [])
        }
        #expect(try FileSystem.statusIfExists(AppendRecord.path(for: output)) == nil)
        // A removed file is simply no longer listed.
        try FileSystem.remove(source + "/new-0.txt")
        #expect(try ZipPacker.pack(source, to: output).appendedInPlace)
        #expect(try ZipArchive.open(output).entry(at: "new-0.txt") == nil)
        #expect(try Self.differences(output, from: source, scratch: directory, "out-removed") == [])
    }

    @Test(
        "other readers accept an appended archive: unzip -t, 7z t, bsdtar, python's zipfile",
        Prerequisite.programs("unzip", "7z", "bsdtar", "python3"))
    func otherReaders() throws {
        let (directory, source, output) = try Self.packed("zip-append-interop")
        try Files.write(source + "/pages/1.json", "edited")
        try Files.write(source + "/metadata.json", "{}")
        #expect(try ZipPacker.pack(source, to: output).appendedInPlace)
        let unzip = try runProgram(which("unzip")!, ["-t", output])
        #expect(unzip.status == 0 && !unzip.output.contains("warning"), "\(unzip.output) \(unzip.error)")
        let extracted = directory.url("by-unzip")
        try Files.makeDirectory(extracted)
        #expect(try runProgram(which("unzip")!, ["-q", output, "-d", extracted]).status == 0)
        #expect(try treeDifferences(source, extracted) == [])
        let seven = try runProgram(which("7z")!, ["t", output])
        #expect(seven.status == 0 && seven.output.contains("Everything is Ok") && !seven.output.contains("Warnings"), "\(seven.output)")
        let bsdtar = try runProgram(which("bsdtar")!, ["-tf", output])
        #expect(bsdtar.status == 0, "\(bsdtar.error)")
        let script = "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print(z.testzip()); print(z.read('pages/1.json').decode())"
        let python = try runProgram(which("python3")!, ["-c", script, output])
        #expect(python.status == 0 && python.output == "None\nedited\n", "\(python.output) \(python.error)")
    }

    @Test("the rewrite instead: too much dead, --compact, a fixed time, a hard link at OUT (whose other name keeps its bytes)")
    func rewrites() throws {
        let (directory, source, output) = try Self.packed("zip-append-rewrite")
        // The stored random file is most of the archive: its old version would be over half.
        try Files.write(source + "/media/noise.bin", (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) })
        var report = try ZipPacker.pack(source, to: output)
        #expect(!report.appendedInPlace)
        #expect(try ZipArchive.open(output).deadRanges.isEmpty)
        try Files.write(source + "/pages/1.json", "edited")
        #expect(try ZipPacker.pack(source, to: output).appendedInPlace)
        var options = ZipPackOptions()
        options.appendsInPlace = false
        try Files.write(source + "/pages/2.json", "edited")
        report = try ZipPacker.pack(source, to: output, options: options)
        #expect(!report.appendedInPlace)
        #expect(try ZipArchive.open(output).deadRanges.isEmpty)
        try Files.write(source + "/pages/3.json", "edited")
        #expect(!(try ZipPacker.pack(source, to: output, options: ZipPackOptions(modificationTime: 1_700_000_000)).appendedInPlace))
        let other = directory.url("other.zip")
        try FileSystem.link(output, to: other)
        let kept = try Files.read(other)
        try Files.write(source + "/pages/4.json", "edited")
        #expect(!(try ZipPacker.pack(source, to: output).appendedInPlace))
        #expect(try Files.read(other) == kept)
        #expect(try Self.differences(output, from: source, scratch: directory, "out") == [])
        #expect(pkgtool("help", "pack").output.contains("--compact"))
    }

    @Test("a crash at every step of an append leaves exactly the old archive or the complete new one, and the next pack works")
    func crashAtEveryStep() throws {
        // Count the disk-changing steps of one uninterrupted append.
        let counting = try Self.packed("zip-append-count")
        try Files.write(counting.source + "/pages/4.json", "final")
        try Files.write(counting.source + "/added.txt", "added")
        let counter = CrashAfter(.max)
        let counted = try IOFaultInjection.withInjector(counter) { try ZipPacker.pack(counting.source, to: counting.output) }
        #expect(counted.appendedInPlace)
        let steps = counter.mutations
        #expect(steps >= 5)
        var violations = 0
        for limit in 0..<steps {
            let (directory, source, output) = try Self.packed("zip-append-crash")
            try Files.write(source + "/pages/4.json", "final")
            try Files.write(source + "/added.txt", "added")
            let old = try Files.read(output)
            let crash = CrashAfter(limit)
            let packed = (try? IOFaultInjection.withInjector(crash) { try ZipPacker.pack(source, to: output) }) != nil
            let context = "crash after \(limit) of \(steps) steps"
            #expect(crash.crashed, "\(context): the crash point was never reached")
            // The next open recovers: the old archive byte for byte, or the new one whole.
            let archive = try ZipArchive.open(output)
            try archive.verify()
            #expect(try FileSystem.statusIfExists(AppendRecord.path(for: output)) == nil, "\(context): record left")
            let after = try Files.read(output)
            let isNew = try Self.differences(output, from: source, scratch: directory, "check") == []
            if !(after == old || isNew) { violations += 1 }
            #expect(after == old || isNew, "\(context): neither the old archive nor the new")
            if packed { #expect(isNew, "\(context): reported success") }
            // The next pack, uninterrupted, gives an archive of the source.
            _ = try ZipPacker.pack(source, to: output)
            try ZipArchive.open(output).verify()
            #expect(try Self.differences(output, from: source, scratch: directory, "next") == [], "\(context): next pack")
        }
        #expect(violations == 0)
        print("append kill sweep: \(steps) crash points, \(violations) violations")
    }

    @Test("an interrupted append is read as the old archive while its record stays (a reader that cannot recover)")
    func readerView() throws {
        let (directory, source, output) = try Self.packed("zip-append-view")
        defer { withExtendedLifetime(directory) {} }
        let old = try Files.read(output)
        try Files.write(source + "/pages/4.json", "final")
        // Crash after the record and part of the appended entries.
        let crash = CrashAfter(3)
        _ = try? IOFaultInjection.withInjector(crash) { try ZipPacker.pack(source, to: output) }
        let status = try FileSystem.status(output)
        #expect(status.size >= Int64(old.count))
        let file = try FileDescriptor.open(output)
        #expect(AppendRecovery.readableLength(of: file, path: output, status: status) == Int64(old.count))
        // A hostile or stray record for another file says nothing about this one.
        _ = try ZipArchive.open(output)
        #expect(try Files.read(output) == old)
    }
}
