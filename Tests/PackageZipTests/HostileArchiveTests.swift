import Foundation
import PackageCore
import PackageTestSupport
import PackageZip
import Testing

@Suite("Hostile and corrupt archives are refused, and nothing is written")
struct HostileArchiveTests {
    typealias Entry = CraftedZip.Entry

    /// The crafted cases: a label, the archive, the kind of refusal and a phrase of the message.
    static var cases: [(String, CraftedZip, ZipError.Kind, String)] {
        let good = Entry("ok.txt", "fine")
        var cases: [(String, CraftedZip, ZipError.Kind, String)] = [
            ("dot-dot", CraftedZip([good, Entry("../escape.txt", "x")]), .unsafeName, "'..'"),
            ("dot-dot-inside", CraftedZip([Entry("a/../../escape.txt", "x")]), .unsafeName, "'..'"),
            ("absolute", CraftedZip([Entry("/tmp/pkgtool-escape.txt", "x")]), .unsafeName, "absolute"),
            ("backslash-dot-dot", CraftedZip([Entry("..\\..\\escape.txt", "x")]), .unsafeName, "'..'"),
            ("backslash-absolute", CraftedZip([Entry("\\escape.txt", "x")]), .unsafeName, "absolute"),
            ("drive-letter", CraftedZip([Entry("C:/escape.txt", "x")]), .unsafeName, "drive letter"),
            ("empty-name", CraftedZip([Entry("", "x")]), .unsafeName, "empty"),
            ("double-slash", CraftedZip([Entry("a//b", "x")]), .unsafeName, "empty component"),
            ("absolute-link", CraftedZip([Entry.symlink("l", to: "/etc")]), .symlinkEscape, "absolute"),
            ("climbing-link", CraftedZip([Entry.symlink("a/l", to: "../../outside")]), .symlinkEscape, "outside"),
            (
                "entry-beneath-link",
                CraftedZip([Entry.symlink("a", to: "sub"), Entry.directory("sub"), Entry("a/passwd", "x")]),
                .symlinkEscape, "beneath the symbolic link"
            ),
            (
                "link-chain",
                CraftedZip([Entry.symlink("here", to: "."), Entry.symlink("b/x", to: "../here/../..")]),
                .symlinkEscape, "outside"
            ),
            ("link-loop", CraftedZip([Entry.symlink("p", to: "q"), Entry.symlink("q", to: "p")]), .symlinkEscape, "loop"),
            ("link-self", CraftedZip([Entry.symlink("d/s", to: "../d/s/x")]), .symlinkEscape, "loop"),
            (
                "link-chain-41",
                CraftedZip([good] + (1...41).map { Entry.symlink("l\($0)", to: $0 == 41 ? "ok.txt" : "l\($0 + 1)") }),
                .symlinkEscape, "a chain of more than 40 links"
            ),
            ("duplicate", CraftedZip([good, Entry("ok.txt", "again")]), .duplicate, "more than once"),
            ("file-and-directory", CraftedZip([good, Entry.directory("ok.txt")]), .duplicate, "more than once"),
            ("beneath-a-file", CraftedZip([good, Entry("ok.txt/inner", "x")]), .duplicate, "which is a file"),
            ("trailing-junk", { var zip = CraftedZip([good]); zip.suffix = Array("junk".utf8); return zip }(), .junk, "end"),
            ("leading-junk", { var zip = CraftedZip([good]); zip.prefix = Array("MZ-sfx".utf8); return zip }(), .junk, "precede"),
        ]
        // CRC, sizes, streams.
        var badCRC = good
        badCRC.crc ^= 1
        cases.append(("bad-crc", CraftedZip([badCRC]), .crcMismatch, "CRC-32"))
        var bomb = Entry.deflated("bomb.txt", [UInt8](repeating: 0x41, count: 100_000))
        bomb.uncompressedSize = 1000
        cases.append(("inflates-past-size", CraftedZip([bomb]), .badData, "past its declared size"))
        var short = Entry.deflated("short.txt", Array(String(repeating: "truncate me ", count: 500).utf8))
        short.data = Array(short.data.prefix(short.data.count / 2))
        cases.append(("truncated-stream", CraftedZip([short]), .badData, "truncated"))
        var garbage = Entry("garbage.txt", [UInt8](repeating: 0xFF, count: 64))
        garbage.method = 8
        cases.append(("garbage-stream", CraftedZip([garbage]), .badData, "deflate"))
        var encrypted = good
        encrypted.flags = 1
        cases.append(("encrypted", CraftedZip([encrypted]), .encrypted, "encrypted"))
        var bzip2 = good
        bzip2.method = 12
        cases.append(("bzip2", CraftedZip([bzip2]), .unsupportedMethod, "bzip2 (method 12)"))
        var lzma = good
        lzma.method = 14
        cases.append(("lzma", CraftedZip([lzma]), .unsupportedMethod, "LZMA (method 14)"))
        // Headers that disagree.
        var otherName = good
        otherName.localName = Array("ok.txx".utf8)
        cases.append(("local-name", CraftedZip([otherName]), .inconsistent, "names a different file"))
        var otherSize = good
        otherSize.centralUncompressedSize = 3
        cases.append(("central-size", CraftedZip([otherSize]), .inconsistent, "sizes"))
        var wrongCount = CraftedZip([good, Entry("b.txt", "b")])
        wrongCount.declaredCount = 3
        cases.append(("entry-count", wrongCount, .inconsistent, "declares"))
        // Fifield's overlapping entries: two names sharing one local header and its data.
        var first = Entry.deflated("a.txt", [UInt8](repeating: 0, count: 50_000))
        first.centralOffset = 0
        var second = first
        second.name = Array("b.txt".utf8)
        second.localName = Array("a.txt".utf8)
        cases.append(("overlap", CraftedZip([first, second]), .overlap, "overlaps"))
        // A second archive inside the comment of the first: the real end record wins.
        return cases
    }

    @Test("each crafted case is refused by verify and unpack with exit 1, naming the fault; nothing is written")
    func refused() throws {
        let directory = try TemporaryDirectory("zip-hostile")
        for (label, zip, kind, phrase) in Self.cases {
            let workspace = directory.url(label)
            try Files.makeDirectory(workspace)
            let archive = workspace + "/a.zip"
            try zip.write(to: archive)
            try Files.write(workspace + "/sentinel", "untouched")
            let before = try listing(workspace)

            do {
                _ = try ZipArchive.open(archive).verify()
                Issue.record("\(label): verify accepted it")
            } catch let error as ZipError {
                #expect(error.kind == kind, "\(label): \(error)")
                #expect(error.description.contains(phrase), "\(label): \(error)")
                #expect(!error.description.contains("\n"))
            }
            let verified = pkgtool("verify", archive)
            #expect(verified.status == .failure, "\(label): \(verified.errors)")
            #expect(verified.errors.count == 1)

            let destination = workspace + "/dest"
            let unpacked = pkgtool("unpack", archive, destination)
            #expect(unpacked.status == .failure, "\(label): \(unpacked.errors)")
            #expect(unpacked.errors.count == 1 && unpacked.errors[0].hasPrefix("refused '"), "\(label): \(unpacked.errors)")
            #expect(try listing(workspace) == before, "\(label): something was left behind")
            #expect(try Files.read(workspace + "/sentinel") == Array("untouched".utf8))

            // An existing empty destination stays empty.
            try Files.makeDirectory(destination)
            #expect(pkgtool("unpack", archive, destination).status == .failure)
            #expect(try listing(destination).isEmpty, "\(label)")
            try FileSystem.removeDirectory(destination)
        }
        #expect(try FileSystem.statusIfExists("/tmp/pkgtool-escape.txt") == nil)
    }

    @Test("limits: entries, total size, expansion ratio, each configurable")
    func limits() throws {
        let directory = try TemporaryDirectory("zip-limits")
        let zeros = [UInt8](repeating: 0, count: 4 << 20)
        let zip = CraftedZip([Entry("a.txt", "a"), Entry("b.txt", "b"), Entry.deflated("zeros", zeros)])
        let archive = directory.url("l.zip")
        try zip.write(to: archive)
        #expect(pkgtool("verify", archive).status == .success)
        let byCount = pkgtool("verify", "--max-entries", "2", archive)
        #expect(byCount.status == .failure && byCount.errors[0].contains("limit"))
        let bySize = pkgtool("verify", "--max-size", "1000000", archive)
        #expect(bySize.status == .failure && bySize.errors[0].contains("limit"))
        var limits = ZipLimits()
        limits.ratioThreshold = 1 << 20
        limits.maximumRatio = 100
        #expect(throws: ZipError.self) { _ = try ZipArchive.open(archive, limits: limits) }
        let unpacked = pkgtool("unpack", "--max-entries", "2", archive, directory.url("out"))
        #expect(unpacked.status == .failure)
        #expect(try FileSystem.statusIfExists(directory.url("out")) == nil)
    }

    @Test("a CRC failure found while extracting removes everything already written")
    func lateFailure() throws {
        let directory = try TemporaryDirectory("zip-late")
        var entries = (0..<50).map { Entry("dir/\($0).txt", "file \($0)") }
        entries[49].crc ^= 0xFFFF
        try CraftedZip(entries).write(to: directory.url("late.zip"))
        let result = pkgtool("unpack", "--jobs", "1", directory.url("late.zip"), directory.url("dest"))
        #expect(result.status == .failure)
        #expect(result.errors.first?.contains("dir/49.txt") == true)
        #expect(try listing(directory.path) == ["late.zip"])
    }

    @Test("an archive hidden in the comment, or a lone central header or end record there, is refused as ambiguous")
    func archiveInComment() throws {
        let directory = try TemporaryDirectory("zip-comment")
        let inner = CraftedZip([Entry("inner.txt", "hidden")]).bytes
        var outer = CraftedZip([Entry("outer.txt", "visible")])
        for (label, comment) in [
            ("archive", inner), ("central", Array("see PK".utf8) + le32(0x0201_4B50)),
            ("end", le32(0x0605_4B50) + [UInt8](repeating: 0, count: 18)), ("zip64-end", le32(0x0606_4B50) + [1, 2, 3]),
        ] {
            outer.comment = comment
            try outer.write(to: directory.url("c.zip"))
            #expect(throws: ZipError.self, "\(label)") { _ = try ZipArchive.open(directory.url("c.zip")) }
            let unpacked = pkgtool("unpack", directory.url("c.zip"), directory.url("out"))
            #expect(unpacked.status == .failure && unpacked.errors.count == 1, "\(label): \(unpacked.errors)")
            #expect(unpacked.errors.first?.contains("the archive comment holds") == true, "\(label): \(unpacked.errors)")
            #expect(try FileSystem.statusIfExists(directory.url("out")) == nil)
        }
        // A comment of plain text is fine.
        outer.comment = Array("made by hand; PK is just two letters".utf8)
        try outer.write(to: directory.url("c.zip"))
        let archive = try ZipArchive.open(directory.url("c.zip"))
        #expect(archive.entries.map(\.path) == ["outer.txt"])
        try archive.verify()
    }

    @Test("I/O errors while extracting are trouble (exit 2), and leave nothing behind")
    func ioFailure() throws {
        let directory = try TemporaryDirectory("zip-io")
        try CraftedZip([Entry("a/b.txt", "b"), Entry("c.txt", "c")]).write(to: directory.url("x.zip"))
        let archive = try ZipArchive.open(directory.url("x.zip"))
        let injector = FailingStep(.write, pathFragment: "c.txt", fault: .error(.noSpace))
        #expect(throws: FileSystemError.self) {
            try IOFaultInjection.withInjector(injector) { try archive.extract(to: directory.url("dest"), workers: 1) }
        }
        #expect(try listing(directory.path) == ["x.zip"])
        // A destination that exists and is not empty is refused up front.
        try Files.makeDirectory(directory.url("full"))
        try Files.write(directory.url("full/keep"), "keep")
        #expect(pkgtool("unpack", directory.url("x.zip"), directory.url("full")).status == .trouble)
        #expect(try listing(directory.url("full")) == ["keep"])
    }
}

@Suite("Names that differ only by Unicode normalisation")
struct NormalisationTests {
    @Test("precomposed and decomposed é are two names, as on Linux")
    func distinctNames() throws {
        let directory = try TemporaryDirectory("zip-nfd")
        let composed = "caf\u{E9}.txt"
        let decomposed = "cafe\u{301}.txt"
        try CraftedZip([CraftedZip.Entry(composed, "one"), CraftedZip.Entry(decomposed, "two")]).write(to: directory.url("n.zip"))
        let archive = try ZipArchive.open(directory.url("n.zip"))
        #expect(archive.entries.count == 2)
        try archive.extract(to: directory.url("out"))
        #expect(try listing(directory.url("out")).count == 2)
        // A real duplicate is still one.
        try CraftedZip([CraftedZip.Entry(composed, "one"), CraftedZip.Entry(composed, "two")]).write(to: directory.url("d.zip"))
        #expect(throws: ZipError.self) { _ = try ZipArchive.open(directory.url("d.zip")) }
    }
}
