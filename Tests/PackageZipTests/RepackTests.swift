import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

@Suite("Incremental repack, snapshots and the CLI around them")
struct RepackTests {
    @Test("repacking copies unchanged entries raw, recompresses changed ones, and gives a fresh pack's bytes")
    func repack() throws {
        let directory = try TemporaryDirectory("zip-repack")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        var options = ZipPackOptions(modificationTime: 1_700_000_000)
        let first = try ZipPacker.pack(source, to: output, options: options)
        #expect(first.reused == 0)

        try Files.write(source + "/pages/2.json", #"{"text": "changed"}"#)
        let second = try ZipPacker.pack(source, to: output, options: options)
        #expect(second.reused == second.files - 1)
        #expect(second.files == first.files)

        options.reuseExistingOutput = false
        let fresh = directory.url("fresh.zip")
        _ = try ZipPacker.pack(source, to: fresh, options: options)
        #expect(try Files.read(output) == Files.read(fresh))
        try ZipArchive.open(output).verify()

        // --base names another archive; a changed size is never reused.
        try Files.write(source + "/metadata.json", "{}")
        let third = try ZipPacker.pack(source, to: directory.url("third.zip"), options: ZipPackOptions(base: output))
        #expect(third.reused == third.files - 1)
        let extracted = directory.url("x")
        try ZipArchive.open(directory.url("third.zip")).extract(to: extracted)
        #expect(try treeDifferences(source, extracted) == [])
    }

    @Test("a failing write leaves the old archive in place and no temporary behind")
    func atomicReplace() throws {
        let directory = try TemporaryDirectory("zip-atomic")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        _ = try ZipPacker.pack(source, to: output)
        let before = try Files.read(output)
        try Files.write(source + "/new.txt", "new")
        let injector = FailingStep(.write, pathFragment: directory.path, fault: .error(.noSpace))
        #expect(throws: FileSystemError.self) {
            try IOFaultInjection.withInjector(injector) { _ = try ZipPacker.pack(source, to: output) }
        }
        #expect(try Files.read(output) == before)
        #expect(try listing(directory.path) == ["out.zip", "src"])
        // A read error in a worker thread stops the pack the same way.
        let readFailure = FailingStep(.read, pathFragment: "big.txt", fault: .error(.ioError))
        #expect(throws: FileSystemError.self) {
            try IOFaultInjection.withInjector(readFailure) {
                _ = try ZipPacker.pack(source, to: output, options: ZipPackOptions(reuseExistingOutput: false))
            }
        }
        #expect(try Files.read(output) == before)
    }

    @Test("snapshot: an archive of ours gives the directory's tree hash; others fall back to CRC and size", Prerequisite.programs("zip"))
    func snapshot() throws {
        let directory = try TemporaryDirectory("zip-snapshot")
        let source = directory.url("src")
        try makeSampleTree(source)
        _ = try ZipPacker.pack(source, to: directory.url("ours.zip"))
        let tree = try TreeScanner().scan(source).snapshot
        let ours = try ZipArchive.open(directory.url("ours.zip"))
        #expect(ours.hasAllHashes)
        #expect(try ours.snapshot().rootHash == tree.rootHash)
        do {
            _ = try Prerequisite.program("zip")
            _ = try runProgram("/bin/sh", ["-c", "cd '\(source)' && zip -qry '\(directory.url("theirs.zip"))' ."])
            let theirs = try ZipArchive.open(directory.url("theirs.zip"))
            #expect(!theirs.hasAllHashes)
            #expect(try theirs.snapshot(computingMissingHashes: true).rootHash == tree.rootHash)
            let entry = try #require(theirs.entry(at: "metadata.json"))
            #expect(entry.crc32 == crc32Of(try Files.read(source + "/metadata.json")))
        }
    }

    @Test("ls lists sizes, --long adds hashes, --json is parseable; errors are one line with the documented status")
    func listingCommands() throws {
        let directory = try TemporaryDirectory("zip-ls")
        let source = directory.url("src")
        try makeSampleTree(source)
        let archive = directory.url("a.zip")
        #expect(pkgtool("pack", source, archive).status == .success)
        let plain = pkgtool("ls", archive)
        #expect(plain.status == .success)
        #expect(plain.output.contains("metadata.json"))
        #expect(plain.output.contains("link-to-meta -> metadata.json"))
        let long = pkgtool("ls", "--long", archive)
        let hash = try ContentHash.ofFile(atPath: source + "/metadata.json", buffer: ChunkBuffer()).hash
        #expect(long.output.contains(hash.description))
        let json = pkgtool("ls", "--json", archive)
        let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
        #expect(parsed?.count == (try ZipArchive.open(archive)).entries.count)
        let verified = pkgtool("verify", "--json", archive)
        #expect(verified.status == .success && verified.output.contains("\"ok\": true"))
        #expect(pkgtool("verify", archive).output.hasPrefix("ok: \(archive): "))

        let missing = pkgtool("verify", directory.url("missing.zip"))
        #expect(missing.status == .trouble && missing.errors.count == 1)
        try Files.write(directory.url("text.zip"), "not a zip at all, just some text here")
        let notZip = pkgtool("verify", directory.url("text.zip"))
        #expect(notZip.status == .failure && notZip.errors == ["refused '\(directory.url("text.zip"))': not a ZIP archive (no end-of-central-directory record)"])
        #expect(pkgtool("unpack", archive).status == .trouble)
        #expect(pkgtool("pack", directory.url("missing"), directory.url("o.zip")).status == .trouble)
    }
}

@Suite("Pack edge cases")
struct PackEdgeCaseTests {
    @Test("an output inside the source is not packed into itself; FIFOs are skipped with a warning")
    func outputInsideSource() throws {
        let directory = try TemporaryDirectory("zip-inside")
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 10_000)
        let output = source + "/self.zip"
        #expect(pkgtool("pack", source, output).status == .success)
        _ = mkfifo(source + "/pipe", 0o644)
        let again = pkgtool("pack", source, output)
        #expect(again.status == .success)
        #expect(again.errors.contains { $0.contains("skipped") && $0.contains("pipe") })
        let archive = try ZipArchive.open(output)
        #expect(archive.entry(at: "self.zip") == nil)
        #expect(archive.entry(at: "pipe") == nil)
    }
}

@Suite("diff with archives")
struct ZipDiffTests {
    @Test("diff accepts zips on either side: ours by stored hashes, others by reading their data", Prerequisite.programs("zip"))
    func diffArchives() throws {
        let directory = try TemporaryDirectory("zip-diff")
        let source = directory.url("src")
        try makeSampleTree(source)
        let ours = directory.url("ours.zip")
        #expect(pkgtool("pack", source, ours).status == .success)
        #expect(pkgtool("diff", source, ours).status == .success)
        #expect(pkgtool("diff", ours, source).status == .success)
        do {
            _ = try Prerequisite.program("zip")
            let theirs = directory.url("theirs.zip")
            _ = try runProgram("/bin/sh", ["-c", "cd '\(source)' && zip -qry '\(theirs)' ."])
            #expect(pkgtool("diff", ours, theirs).status == .success)
        }
        try Files.write(source + "/metadata.json", "changed")
        let changed = pkgtool("diff", ours, source)
        #expect(changed.status == .failure)
        #expect(changed.output.contains("metadata.json"))
    }
}

@Suite("Repack with a package manifest")
struct ManifestRepackTests {
    @Test("a sound manifest's stat cache spares reading unchanged files; .pkgtool is never archived")
    func statCache() throws {
        let directory = try TemporaryDirectory("zip-manifest")
        let source = directory.url("src")
        try makeSampleTree(source)
        let output = directory.url("out.zip")
        #expect(pkgtool("pack", source, output).status == .success)
        #expect(pkgtool("manifest", source).status == .success)
        try Files.write(source + "/pages/3.json", #"{"text": "edited"}"#)
        // Reading an unchanged file would fail: the manifest must vouch for it instead.
        let injector = FailingStep(.read, pathFragment: "pages/0.json", fault: .error(.ioError))
        let report = try IOFaultInjection.withInjector(injector) { try ZipPacker.pack(source, to: output) }
        #expect(report.reused == report.files - 1)
        let archive = try ZipArchive.open(output)
        #expect(!archive.entries.contains { $0.path.hasPrefix(".pkgtool") })
        try archive.verify()
    }
}
