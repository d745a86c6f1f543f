import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

/// `keepsPrevious` (`pack --keep-previous`): the archive a pack replaces is kept as
/// `.NAME.pkgtool-previous`, and the next pack is written over it and exchanged with NAME.
@Suite("Repack over the kept previous archive")
struct PreviousArchiveTests {
    static let time: Int64 = 1_700_000_000
    static let keeping = ZipPackOptions(modificationTime: time, keepsPrevious: true)

    /// The bytes a fresh pack of `source` gives, which every repack must equal.
    static func freshPack(_ source: String) throws -> [UInt8] {
        let scratch = try TemporaryDirectory("zip-previous-fresh")
        let options = ZipPackOptions(reuseExistingOutput: false, modificationTime: time)
        _ = try ZipPacker.pack(source, to: scratch.url("fresh.zip"), options: options)
        return try Files.read(scratch.url("fresh.zip"))
    }

    /// A directory holding `src`, `out.zip` packed from it, and (when `withPrevious`) the
    /// previous archive, after an edit and a second pack.
    static func packedTwice(_ label: String, withPrevious: Bool = true, bigSize: Int = 2_500_000) throws -> (
        directory: TemporaryDirectory, source: String, output: String, previous: String
    ) {
        let directory = try TemporaryDirectory(label)
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: bigSize)
        let output = directory.url("out.zip")
        _ = try ZipPacker.pack(source, to: output, options: keeping)
        if withPrevious {
            try Files.write(source + "/pages/1.json", #"{"text": "second edition"}"#)
            _ = try ZipPacker.pack(source, to: output, options: keeping)
        }
        return (directory, source, output, directory.url(".out.zip.pkgtool-previous"))
    }

    @Test("repeated repacks after edits: each equals a fresh pack and the source, verifies, and the previous file is the archive replaced", Prerequisite.programs("unzip"))
    func repeatedRepacks() throws {
        let directory = try TemporaryDirectory("zip-previous")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        let previous = directory.url(".out.zip.pkgtool-previous")
        let first = try ZipPacker.pack(source, to: output, options: Self.keeping)
        #expect(!first.reusedPrevious)
        #expect(try listing(directory.path) == ["out.zip", "src"], "a first pack has nothing to keep")

        let edits: [(String, () throws -> Void)] = [
            ("edit a page", { try Files.write(source + "/pages/2.json", #"{"text": "changed"}"#) }),
            ("add a file", { try Files.writeRandom(source + "/media/added.bin", size: 700_000, seed: 7) }),
            ("drop the big file", { try FileSystem.remove(source + "/media/big.txt") }),
            ("edit another page", { try Files.write(source + "/pages/4.json", #"{"text": "again"}"#) }),
            ("bring the big file back", { try Files.writeRandom(source + "/media/big.txt", size: 3_000_000, seed: 8) }),
        ]
        for (round, (label, edit)) in edits.enumerated() {
            try edit()
            let replaced = try Files.read(output)
            let report = try ZipPacker.pack(source, to: output, options: Self.keeping)
            #expect(report.reusedPrevious == (round > 0), "\(label): the previous file exists from the second repack on")
            #expect(report.reused > 0, "\(label)")
            #expect(try Files.read(previous) == replaced, "\(label): the previous file is the archive replaced")
            #expect(try Files.read(output) == Self.freshPack(source), "\(label)")
            let status = try FileSystem.status(output)
            #expect(status.size == report.archiveBytes && status.permissions == 0o644, "\(label)")
            #expect(try listing(directory.path) == [".out.zip.pkgtool-previous", "out.zip", "src"], "\(label)")
            try ZipArchive.open(output).verify()
            let extracted = try TemporaryDirectory("zip-previous-x")
            try ZipArchive.open(output).extract(to: extracted.url("x"))
            #expect(try treeDifferences(source, extracted.url("x"), times: false) == [], "\(label)")
        }
        #expect(pkgtool("verify", output).status == .success)
        do {
            let unzip = try Prerequisite.program("unzip")
            let test = try runProgram(unzip, ["-tq", output])
            #expect(test.status == 0, "\(test.output) \(test.error)")
        }
    }

    @Test("a previous file larger than the new archive is cut to the new length")
    func shrinks() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-shrink", bigSize: 6_000_000)
        defer { withExtendedLifetime(directory) {} }
        try FileSystem.remove(source + "/media/big.txt")
        try FileSystem.remove(source + "/media/noise.bin")
        let larger = try FileSystem.status(previous).size
        let report = try ZipPacker.pack(source, to: output, options: Self.keeping)
        #expect(report.reusedPrevious)
        #expect(report.archiveBytes < larger / 10)
        #expect(try FileSystem.status(output).size == report.archiveBytes)
        #expect(try Files.read(output) == Self.freshPack(source))
        try ZipArchive.open(output).verify()
    }

    @Test("a previous file with another name is not written through: that name keeps its bytes")
    func hardLinkedPrevious() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-nlink")
        defer { withExtendedLifetime(directory) {} }
        let other = directory.url("other.zip")
        try FileSystem.link(previous, to: other)
        let otherBytes = try Files.read(other)
        try Files.write(source + "/metadata.json", #"{"title": "linked"}"#)
        let replaced = try Files.read(output)
        let report = try ZipPacker.pack(source, to: output, options: Self.keeping)
        #expect(!report.reusedPrevious)
        #expect(try Files.read(other) == otherBytes)
        #expect(try Files.read(previous) == replaced)
        #expect(try FileSystem.status(previous).linkCount == 1)
        #expect(try Files.read(output) == Self.freshPack(source))
        // The previous file has one name again, so the next repack writes over it.
        try Files.write(source + "/metadata.json", #"{"title": "linked, twice"}"#)
        #expect(try ZipPacker.pack(source, to: output, options: Self.keeping).reusedPrevious)
        #expect(try Files.read(other) == otherBytes)
        #expect(try Files.read(output) == Self.freshPack(source))
    }

    @Test("a previous file that is a symbolic link is replaced, never followed")
    func symlinkPrevious() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-symlink", withPrevious: false)
        defer { withExtendedLifetime(directory) {} }
        let victim = directory.url("victim.bin")
        try Files.writeRandom(victim, size: 4_000_000, seed: 3)
        let victimBytes = try Files.read(victim)
        try Files.symlink(previous, to: "victim.bin")
        try Files.write(source + "/pages/0.json", "{}")
        let replaced = try Files.read(output)
        let report = try ZipPacker.pack(source, to: output, options: Self.keeping)
        #expect(!report.reusedPrevious)
        #expect(try Files.read(victim) == victimBytes)
        #expect(try FileSystem.status(previous).kind == .regular)
        #expect(try Files.read(previous) == replaced)
        #expect(try Files.read(output) == Self.freshPack(source))
    }

    @Test("the previous file named as the explicit base is read, not written over")
    func previousAsBase() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-base")
        defer { withExtendedLifetime(directory) {} }
        try Files.write(source + "/pages/3.json", #"{"text": "from the older base"}"#)
        let replaced = try Files.read(output)
        var options = Self.keeping
        options.base = previous
        let report = try ZipPacker.pack(source, to: output, options: options)
        #expect(!report.reusedPrevious)
        #expect(report.reused == report.files - 2, "all but the two pages edited since the base")
        #expect(try Files.read(output) == Self.freshPack(source))
        #expect(try Files.read(previous) == replaced)
    }

    @Test("without keepsPrevious nothing is kept, and a previous file from an earlier pack is left alone")
    func withoutTheOption() throws {
        let directory = try TemporaryDirectory("zip-previous-off")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        let plain = ZipPackOptions(modificationTime: Self.time)
        _ = try ZipPacker.pack(source, to: output, options: plain)
        try Files.write(source + "/pages/2.json", "{}")
        #expect(try !ZipPacker.pack(source, to: output, options: plain).reusedPrevious)
        #expect(try listing(directory.path) == ["out.zip", "src"])

        try Files.write(source + "/pages/2.json", "[]")
        _ = try ZipPacker.pack(source, to: output, options: Self.keeping)
        let previous = directory.url(".out.zip.pkgtool-previous")
        let kept = try Files.read(previous)
        let keptInode = try FileSystem.status(previous).inode
        try Files.write(source + "/pages/2.json", "[1]")
        _ = try ZipPacker.pack(source, to: output, options: plain)
        #expect(try Files.read(previous) == kept)
        #expect(try FileSystem.status(previous).inode == keptInode)
        #expect(try Files.read(output) == Self.freshPack(source))
    }

    @Test("an output inside the source: neither it nor its previous file is ever packed")
    func insideTheSource() throws {
        let directory = try TemporaryDirectory("zip-previous-inside")
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 10_000)
        let output = source + "/self.zip"
        for (round, keeps) in [true, true, true, false].enumerated() {
            try Files.write(source + "/pages/0.json", "round \(round)")
            var options = ZipPackOptions(modificationTime: Self.time)
            options.keepsPrevious = keeps
            let report = try ZipPacker.pack(source, to: output, options: options)
            #expect(report.reusedPrevious == (keeps && round >= 2), "round \(round)")
            let archive = try ZipArchive.open(output)
            #expect(archive.entry(at: "self.zip") == nil, "round \(round)")
            #expect(archive.entry(at: ".self.zip.pkgtool-previous") == nil, "round \(round)")
            try archive.verify()
        }
    }

    @Test("a failed write over the previous file leaves the output as it was, with a one-line error naming the file")
    func failedWrite() throws {
        let (directory, source, output, _) = try Self.packedTwice("zip-previous-enospc")
        defer { withExtendedLifetime(directory) {} }
        try Files.write(source + "/new.txt", "new")
        let before = try Files.read(output)
        let injector = FailingStep(.write, pathFragment: ".out.zip.pkgtool-previous", fault: .error(.noSpace))
        let error = try #require(throws: FileSystemError.self) {
            try IOFaultInjection.withInjector(injector) { _ = try ZipPacker.pack(source, to: output, options: Self.keeping) }
        }
        #expect(error.description.hasPrefix("cannot write '\(directory.url(".out.zip.pkgtool-previous"))': "))
        #expect(error.description.contains("ENOSPC"))
        #expect(try Files.read(output) == before)
        // The scratch file is overwritten whole by the next pack.
        #expect(try ZipPacker.pack(source, to: output, options: Self.keeping).reusedPrevious)
        #expect(try Files.read(output) == Self.freshPack(source))
        #expect(try listing(directory.path) == [".out.zip.pkgtool-previous", "out.zip", "src"])
    }

    @Test("where the file system has no RENAME_EXCHANGE, the previous file is renamed over the output instead")
    func noExchange() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-noexchange")
        defer { withExtendedLifetime(directory) {} }
        try Files.write(source + "/pages/0.json", #"{"text": "no exchange"}"#)
        let replaced = try Files.read(output)
        let injector = FailingStep(.exchange, pathFragment: "", fault: .error(.invalidArgument))
        let report = try IOFaultInjection.withInjector(injector) { try ZipPacker.pack(source, to: output, options: Self.keeping) }
        #expect(report.reusedPrevious)
        #expect(try Files.read(output) == Self.freshPack(source))
        #expect(try Files.read(previous) == replaced)
        #expect(try listing(directory.path) == [".out.zip.pkgtool-previous", "out.zip", "src"])
    }

    @Test("a directory in the previous file's place: a one-line error, exit 2, the output as it was, nothing left behind")
    func directoryInTheWay() throws {
        let (directory, source, output, previous) = try Self.packedTwice("zip-previous-dir", withPrevious: false)
        defer { withExtendedLifetime(directory) {} }
        try Files.makeDirectory(previous + "/inside")
        try Files.write(source + "/pages/0.json", "{}")
        let before = try Files.read(output)
        let result = pkgtool("pack", "--keep-previous", source, output)
        #expect(result.status == .trouble)
        #expect(result.errors.count == 1)
        #expect(result.errors.first?.contains("EISDIR") == true, "\(result.errors)")
        #expect(try Files.read(output) == before)
        #expect(try listing(directory.path) == [".out.zip.pkgtool-previous", "out.zip", "src"])
    }

    @Test("pkgtool pack --keep-previous: repacks keep the previous archive and verify clean")
    func command() throws {
        let directory = try TemporaryDirectory("zip-previous-cli")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        for round in 0..<3 {
            try Files.write(source + "/pages/1.json", "round \(round)")
            let replaced: [UInt8]? = round == 0 ? nil : try Files.read(output)
            let result = pkgtool("pack", "--keep-previous", "--mtime", "\(Self.time)", source, output)
            #expect(result.status == .success && result.errors.isEmpty, "\(result.errors)")
            if let replaced { #expect(try Files.read(directory.url(".out.zip.pkgtool-previous")) == replaced) }
            #expect(pkgtool("verify", output).status == .success)
        }
        #expect(try Files.read(output) == Self.freshPack(source))
        #expect(pkgtool("help", "pack").output.contains("--keep-previous"))
    }

    @Test("a crash at any step leaves the output old or complete, and the next pack is whole again")
    func crashAtEveryStep() throws {
        for withPrevious in [false, true] {
            // Count the steps of one uninterrupted repack.
            let counting = try Self.packedTwice("zip-previous-count", withPrevious: withPrevious, bigSize: 1_500_000)
            try Files.write(counting.source + "/pages/4.json", "final")
            let counter = CrashAfter(.max)
            let counted = try IOFaultInjection.withInjector(counter) {
                try ZipPacker.pack(counting.source, to: counting.output, options: Self.keeping)
            }
            #expect(counted.reusedPrevious == withPrevious)
            withExtendedLifetime(counting.directory) {}
            let steps = counter.mutations
            #expect(steps > 5)
            for limit in 0..<steps {
                let (directory, source, output, previous) = try Self.packedTwice(
                    "zip-previous-crash", withPrevious: withPrevious, bigSize: 1_500_000)
                try Files.write(source + "/pages/4.json", "final")
                let old = try Files.read(output)
                let new = try Self.freshPack(source)
                let crash = CrashAfter(limit)
                let packed = (try? IOFaultInjection.withInjector(crash) {
                    try ZipPacker.pack(source, to: output, options: Self.keeping)
                }) != nil
                let after = try Files.read(output)
                let context = "previous \(withPrevious), crash after \(limit) of \(steps) steps"
                #expect(crash.crashed, "\(context): the crash point was never reached")
                #expect(after == old || after == new, "\(context): the output is neither the old archive nor the new")
                if packed { #expect(after == new, "\(context): reported success") }
                // The next pack, uninterrupted, gives the whole new archive.
                let replaced = after
                _ = try ZipPacker.pack(source, to: output, options: Self.keeping)
                #expect(try Files.read(output) == new, "\(context): the pack after the crash")
                #expect(try Files.read(previous) == replaced, "\(context): the pack after the crash")
                try ZipArchive.open(output).verify()
                withExtendedLifetime(directory) {}
            }
        }
    }
}

@Suite("Concurrent repacks over one previous archive")
struct ConcurrentPreviousArchiveTests {
    @Test("two packs of different trees racing to one output: it always ends as one of them, whole")
    func racingPacks() async throws {
        let directory = try TemporaryDirectory("zip-previous-race")
        let sources = [directory.url("a"), directory.url("b")]
        try makeSampleTree(sources[0], seed: 1, bigSize: 3_000_000)
        try makeSampleTree(sources[1], seed: 2, bigSize: 1_000_000)
        try Files.writeRandom(sources[1] + "/media/extra.bin", size: 2_000_000, seed: 9)
        let expected = try sources.map { try PreviousArchiveTests.freshPack($0) }
        let output = directory.url("out.zip")
        _ = try ZipPacker.pack(sources[0], to: output, options: PreviousArchiveTests.keeping)
        for round in 0..<12 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for source in sources {
                    group.addTask { _ = try ZipPacker.pack(source, to: output, options: PreviousArchiveTests.keeping) }
                }
                try await group.waitForAll()
            }
            let now = try Files.read(output)
            #expect(now == expected[0] || now == expected[1], "round \(round): the output is neither archive")
            let previous = try Files.read(directory.url(".out.zip.pkgtool-previous"))
            #expect(previous == expected[0] || previous == expected[1], "round \(round): the previous file is neither archive")
        }
    }
}
