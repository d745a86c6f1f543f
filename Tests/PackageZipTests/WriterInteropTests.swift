import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

@Suite("Archives pkgtool writes, read by the other tools")
struct WriterInteropTests {
    @Test("pass unzip -t, 7z t, bsdtar -tf and python's testzip, and extract identical with unzip and pkgtool", Prerequisite.programs("unzip", "7z", "bsdtar", "python3"))
    func otherToolsAcceptOurArchives() throws {
        let directory = try TemporaryDirectory("zip-writer")
        let source = directory.url("src")
        try makeSampleTree(source)
        let archive = directory.url("out.zip")
        let packed = pkgtool("pack", source, archive)
        #expect(packed.status == .success, "\(packed.errors)")

        do {
            let unzip = try Prerequisite.program("unzip")
            let test = try runProgram(unzip, ["-t", archive])
            #expect(test.status == 0, "\(test.output)")
            let extracted = directory.url("by-unzip")
            try Files.makeDirectory(extracted)
            let run = try runProgram(unzip, ["-q", archive, "-d", extracted])
            #expect(run.status == 0, "\(run.error)")
            #expect(try treeDifferences(source, extracted) == [])
        }
        do {
            let sevenZip = try Prerequisite.program("7z")
            let test = try runProgram(sevenZip, ["t", archive])
            #expect(test.status == 0 && test.output.contains("Everything is Ok"), "\(test.output)")
        }
        do {
            let bsdtar = try Prerequisite.program("bsdtar")
            let test = try runProgram(bsdtar, ["-tf", archive])
            #expect(test.status == 0, "\(test.error)")
            #expect(test.output.contains("Ünïcödé naïve €.txt"))
            #expect(test.output.contains("empty/inner-empty/"))
        }
        do {
            let python = try Prerequisite.program("python3")
            let script = "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print(z.testzip()); print(len(z.infolist()))"
            let test = try runProgram(python, ["-c", script, archive])
            #expect(test.status == 0 && test.output.hasPrefix("None"), "\(test.output) \(test.error)")
        }
        let extracted = directory.url("by-pkgtool")
        let unpacked = pkgtool("unpack", archive, extracted)
        #expect(unpacked.status == .success, "\(unpacked.errors)")
        #expect(try treeDifferences(source, extracted) == [])
        #expect(pkgtool("verify", archive).status == .success)
    }

    @Test("the same tree with the same --mtime gives the same bytes, whatever --jobs")
    func reproducible() throws {
        let directory = try TemporaryDirectory("zip-repro")
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 3_300_000)
        #expect(pkgtool("pack", "--mtime", "1700000000", "--jobs", "1", source, directory.url("a.zip")).status == .success)
        #expect(pkgtool("pack", "--mtime", "1700000000", "--jobs", "4", source, directory.url("b.zip")).status == .success)
        #expect(try Files.read(directory.url("a.zip")) == Files.read(directory.url("b.zip")))
        let archive = try ZipArchive.open(directory.url("a.zip"))
        #expect(archive.entries.allSatisfy { $0.modificationTime == 1_700_000_000 * 1_000_000_000 })
        // The paths come in depth-first order: a directory right before its contents.
        let paths = archive.entries.map(\.path)
        #expect(paths == paths.sorted { PathOrder.pathLess($0, $1) })
    }

    @Test("what is written: methods by content, Unix modes, links, bit 11, our hash field, no ZIP64 when not needed")
    func fields() throws {
        let directory = try TemporaryDirectory("zip-fields")
        let source = directory.url("src")
        try makeSampleTree(source)
        let report = try ZipPacker.pack(source, to: directory.url("out.zip"), options: ZipPackOptions(level: 6))
        let archive = try ZipArchive.open(directory.url("out.zip"))
        #expect(!archive.isZip64)
        #expect(report.entries == archive.entries.count)
        func entry(_ path: String) throws -> ZipEntry { try #require(archive.entry(at: path)) }
        #expect(try entry("media/noise.bin").method == .stored)  // random: stored after sampling
        #expect(try entry("media/big.txt").method == .deflated)
        #expect(try entry("media/big.txt").compressedSize < 100_000)
        #expect(try entry("run.sh").permissions == 0o755)
        #expect(try entry("pages/deep").permissions == 0o750)
        #expect(try entry("link-to-meta").kind == .symbolicLink)
        #expect(try entry("link-to-meta").linkTarget == "metadata.json")
        #expect(try entry("empty/inner-empty").kind == .directory)
        let big = try entry("media/big.txt")
        #expect(big.contentHash == ContentHash.of(try Files.read(source + "/media/big.txt")))
        #expect(archive.hasAllHashes)
        // The raw bytes: bit 11 on the UTF-8 name only; version made by Unix.
        let raw = try Files.read(directory.url("out.zip"))
        let name = Array("Ünïcödé naïve €.txt".utf8)
        let at = try #require(firstIndex(of: name, in: raw))
        let flags = UInt16(raw[at - 30 + 6]) | UInt16(raw[at - 30 + 7]) << 8
        #expect(flags & (1 << 11) != 0)
    }

    @Test("--first puts a file first, stored, with a bare local header (EPUB mimetype)")
    func firstEntry() throws {
        let directory = try TemporaryDirectory("zip-first")
        let source = directory.url("book")
        try Files.makeDirectory(source + "/META-INF")
        try Files.write(source + "/META-INF/container.xml", String(repeating: "<container/>", count: 50))
        try Files.write(source + "/mimetype", "application/epub+zip")
        #expect(pkgtool("pack", "--first", "mimetype", source, directory.url("book.epub")).status == .success)
        let raw = try Files.read(directory.url("book.epub"))
        // "mimetype" at offset 30 and its content at offset 38, as EPUB readers check.
        #expect(Array(raw[30..<38]) == Array("mimetype".utf8))
        #expect(Array(raw[38..<58]) == Array("application/epub+zip".utf8))
        let archive = try ZipArchive.open(directory.url("book.epub"))
        #expect(archive.entries[0].path == "mimetype" && archive.entries[0].method == .stored)
        #expect(pkgtool("pack", "--first", "nope", source, directory.url("x.zip")).status == .trouble)
    }

    @Test("levels 0 to 9 all round-trip; level 0 stores everything")
    func levels() throws {
        let directory = try TemporaryDirectory("zip-levels")
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 200_000)
        for level in [0, 1, 9] {
            let archive = directory.url("l\(level).zip")
            #expect(pkgtool("pack", "--level", "\(level)", source, archive).status == .success)
            let opened = try ZipArchive.open(archive)
            if level == 0 { #expect(opened.entries.allSatisfy { $0.method == .stored }) }
            try opened.verify()
        }
        #expect(pkgtool("pack", "--level", "10", source, directory.url("x.zip")).status == .trouble)
    }

    @Test("an empty directory packs to an empty archive that the tools accept", Prerequisite.programs("unzip"))
    func emptyTree() throws {
        let directory = try TemporaryDirectory("zip-empty")
        try Files.makeDirectory(directory.url("src"))
        #expect(pkgtool("pack", directory.url("src"), directory.url("e.zip")).status == .success)
        #expect(try Files.read(directory.url("e.zip")).count == 22)
        #expect(try ZipArchive.open(directory.url("e.zip")).entries.isEmpty)
        do {
            let unzip = try Prerequisite.program("unzip")
            // unzip reports an empty archive with status 1 and "zipfile is empty" — not an error here.
            let test = try runProgram(unzip, ["-l", directory.url("e.zip")])
            #expect(test.status <= 1)
        }
    }

    func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
