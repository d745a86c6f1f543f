import Foundation
import PackageCore
import PackageTestSupport
@testable import PackageZip
import Testing

/// Issues 25 and 27 through ZIP: names are bytes. `é` precomposed (NFC) and `e` with a
/// combining accent (NFD) are two files on Linux, though Swift's `String ==` equates them;
/// every comparison, lookup and path check of the archive goes through `RelativePath`.
@Suite("Names are bytes through ZIP")
struct NameBytesTests {
    typealias Entry = CraftedZip.Entry

    static let nfc = "\u{E9}"
    static let nfd = "e\u{301}"

    /// Every path beneath `root`, as its bytes, directories with a trailing "/" and links
    /// with " -> TARGET": the `diff -r` of two trees by bytes, with nothing folded.
    func byteListing(_ root: String) throws -> [[UInt8]] {
        var result: [[UInt8]] = []
        func walk(_ relative: String) throws {
            let full = relative.isEmpty ? root : root + "/" + relative
            for name in try DirectoryListing.names(in: FileDescriptor.openDirectory(full)) {
                let path = relative.isEmpty ? name : relative + "/" + name
                let status = try FileSystem.status(root + "/" + path)
                switch status.kind {
                case .directory:
                    result.append(Array((path + "/").utf8))
                    try walk(path)
                case .symbolicLink:
                    result.append(Array((path + " -> " + (try FileSystem.readSymbolicLink(root + "/" + path))).utf8))
                default:
                    result.append(Array(path.utf8) + Array(" = ".utf8) + (try Files.read(root + "/" + path)))
                }
            }
        }
        try walk("")
        return result.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// A tree holding NFC/NFD twins as two files, as two folders, and as a folder and a link.
    func makeTwinTree(_ root: String) throws {
        try Files.makeDirectory(root)
        try Files.write(root + "/caf" + Self.nfc, "file nfc")
        try Files.write(root + "/caf" + Self.nfd, "file nfd")
        try Files.makeDirectory(root + "/d" + Self.nfc)
        try Files.write(root + "/d" + Self.nfc + "/x", "folder nfc")
        try Files.makeDirectory(root + "/d" + Self.nfd)
        try Files.write(root + "/d" + Self.nfd + "/x", "folder nfd")
        try Files.makeDirectory(root + "/l" + Self.nfc)
        try Files.write(root + "/l" + Self.nfc + "/y", "folder beside a link")
        try Files.symlink(root + "/l" + Self.nfd, to: "caf" + Self.nfc)
    }

    @Test("pack a tree of NFC/NFD twins, unpack it: the same names, byte for byte; verify and ls see both")
    func packAndUnpackTwins() throws {
        let directory = try TemporaryDirectory("zip-name-bytes")
        let source = directory.url("src")
        try makeTwinTree(source)
        let zip = directory.url("twins.zip")
        let report = try ZipPacker.pack(source, to: zip)
        // 2 files, 2 folders with a file each, 1 folder with a file, 1 link.
        #expect(report.files == 5 && report.directories == 3 && report.links == 1)

        let archive = try ZipArchive.open(zip)
        #expect(archive.entries.count == 9)
        #expect(Set(archive.entries.map(\.relativePath)).count == 9)
        #expect(try archive.verify().entries == 9)
        // Looked up by bytes: each twin finds its own entry.
        let composed = try #require(archive.entry(at: RelativePath(validating: "caf" + Self.nfc)!))
        let decomposed = try #require(archive.entry(at: RelativePath(validating: "caf" + Self.nfd)!))
        #expect(try archive.contents(of: composed) == Array("file nfc".utf8))
        #expect(try archive.contents(of: decomposed) == Array("file nfd".utf8))
        #expect(composed != decomposed)
        #expect(archive.entry(at: RelativePath(validating: "l" + Self.nfd)!)?.kind == .symbolicLink)
        #expect(archive.entry(at: RelativePath(validating: "l" + Self.nfc)!)?.kind == .directory)

        try archive.extract(to: directory.url("out"))
        #expect(try byteListing(directory.url("out")) == byteListing(source))
        #expect(try byteListing(directory.url("out")).count == 9)

        #expect(pkgtool("verify", zip).status == .success)
        let listed = pkgtool("ls", "-z", zip)
        #expect(listed.status == .success)
        let records = listed.output.utf8.split(separator: 0).map { Array($0) }
        let names = ["caf" + Self.nfc, "caf" + Self.nfd, "d" + Self.nfc + "/", "d" + Self.nfd + "/", "l" + Self.nfc + "/", "l" + Self.nfd]
        for name in names {
            #expect(
                records.contains { $0.reversed().starts(with: (" " + name).utf8.reversed()) },
                "\(name.unicodeScalars.map(\.value))")
        }
        // Unpacked by the CLI as well, and packed again from there: the same entries.
        #expect(pkgtool("unpack", zip, directory.url("cli")).status == .success)
        #expect(try byteListing(directory.url("cli")) == byteListing(source))
    }

    @Test("repacking over an archive of twins reuses each twin's own entry (incremental and in place)")
    func repackTwins() throws {
        let directory = try TemporaryDirectory("zip-name-bytes-repack")
        let source = directory.url("src")
        try makeTwinTree(source)
        let zip = directory.url("twins.zip")
        _ = try ZipPacker.pack(source, to: zip)
        try Files.write(source + "/caf" + Self.nfd, "file nfd, changed")
        let report = try ZipPacker.pack(source, to: zip)
        #expect(report.reused == 4)
        let archive = try ZipArchive.open(zip)
        #expect(try archive.contents(of: #require(archive.entry(at: "caf" + Self.nfc))) == Array("file nfc".utf8))
        #expect(try archive.contents(of: #require(archive.entry(at: "caf" + Self.nfd))) == Array("file nfd, changed".utf8))
        try archive.verify()
        try archive.extract(to: directory.url("out"))
        #expect(try byteListing(directory.url("out")) == byteListing(source))
    }

    @Test("a link é and a file e\u{301}/x: two names, nothing written through the link")
    func linkAndFolderTwins() throws {
        let directory = try TemporaryDirectory("zip-name-bytes-link")
        let outside = directory.url("outside")
        try Files.makeDirectory(outside)
        // Pointing outside: refused for its target, never taken for the folder e\u{301}.
        try CraftedZip([Entry.symlink(Self.nfc, to: outside), Entry(Self.nfd + "/x", "payload")])
            .write(to: directory.url("out.zip"))
        do {
            _ = try ZipArchive.open(directory.url("out.zip"))
            Issue.record("an absolute link was accepted")
        } catch let error as ZipError {
            #expect(error.kind == .symlinkEscape)
            #expect(error.description.contains("absolute path"), "\(error)")
            #expect(PathOrder.sameBytes(error.entry ?? "", Self.nfc), "\(error)")
        }
        #expect(pkgtool("unpack", directory.url("out.zip"), directory.url("dest")).status == .failure)
        #expect(try listing(outside).isEmpty)
        #expect(try FileSystem.statusIfExists(directory.url("dest")) == nil)

        // Pointing inside: both extracted, the file in a folder of its own, `real` untouched.
        try CraftedZip([Entry.directory("real/"), Entry.symlink(Self.nfc, to: "real"), Entry(Self.nfd + "/x", "payload")])
            .write(to: directory.url("in.zip"))
        let archive = try ZipArchive.open(directory.url("in.zip"))
        #expect(archive.entries.count == 3)
        try archive.verify()
        try archive.extract(to: directory.url("in"))
        #expect(try listing(directory.url("in/real")).isEmpty)
        #expect(try FileSystem.status(directory.url("in/" + Self.nfc)).kind == .symbolicLink)
        #expect(try FileSystem.status(directory.url("in/" + Self.nfd)).kind == .directory)
        #expect(try Files.read(directory.url("in/" + Self.nfd + "/x")) == Array("payload".utf8))

        // The same bytes are still one name: beneath the link, refused.
        try CraftedZip([Entry.directory("real/"), Entry.symlink(Self.nfc, to: "real"), Entry(Self.nfc + "/x", "payload")])
            .write(to: directory.url("through.zip"))
        #expect(throws: ZipError.self) { _ = try ZipArchive.open(directory.url("through.zip")) }
        do { _ = try ZipArchive.open(directory.url("through.zip")) } catch let error as ZipError {
            #expect(error.kind == .symlinkEscape && error.description.contains("beneath the symbolic link"), "\(error)")
        }
    }

    @Test("twins differing only in normalisation are two entries; byte-equal duplicates are refused")
    func duplicates() throws {
        let directory = try TemporaryDirectory("zip-name-bytes-dup")
        try CraftedZip([
            Entry.directory("d" + Self.nfc + "/"), Entry.directory("d" + Self.nfd + "/"),
            Entry("d" + Self.nfc + "/x", "1"), Entry("d" + Self.nfd + "/x", "2"),
        ]).write(to: directory.url("two.zip"))
        let archive = try ZipArchive.open(directory.url("two.zip"))
        #expect(archive.entries.count == 4)
        #expect(try archive.snapshot().entries.count == 4)
        try archive.extract(to: directory.url("two"))
        #expect(try Files.read(directory.url("two/d" + Self.nfd + "/x")) == Array("2".utf8))

        for (label, zip) in [
            ("file", CraftedZip([Entry("caf" + Self.nfc, "1"), Entry("caf" + Self.nfc, "2")])),
            ("folder", CraftedZip([Entry.directory("d" + Self.nfd + "/"), Entry.directory("d" + Self.nfd + "/")])),
            ("folder and file", CraftedZip([Entry.directory("d" + Self.nfd + "/"), Entry("d" + Self.nfd, "1")])),
        ] {
            try zip.write(to: directory.url("dup.zip"))
            do {
                _ = try ZipArchive.open(directory.url("dup.zip"))
                Issue.record("\(label): a duplicate was accepted")
            } catch let error as ZipError {
                #expect(error.kind == .duplicate, "\(label): \(error)")
            }
        }
    }

    @Test("a local header or Unicode path field naming the other twin is a different name")
    func localNameTwin() throws {
        let directory = try TemporaryDirectory("zip-name-bytes-local")
        var entry = Entry("caf" + Self.nfc, "x")
        entry.localName = Array(("caf" + Self.nfd).utf8)
        try CraftedZip([entry]).write(to: directory.url("local.zip"))
        do {
            _ = try ZipArchive.open(directory.url("local.zip"))
            Issue.record("a local header naming the twin was accepted")
        } catch let error as ZipError {
            #expect(error.kind == .inconsistent && error.description.contains("names a different file"), "\(error)")
        }
    }

    @Test("ZIP's own name rules sit on RelativePath's: backslashes, drive letters, limits, the reserved name")
    func zipNameRules() throws {
        func reason(_ name: String, limit: Int = 4095) -> String? {
            switch ZipNames.path(of: name, maximumLength: limit) {
            case .success: return nil
            case .failure(let refusal): return refusal.reason
            }
        }
        // RelativePath's rules, in the archive's words.
        #expect(reason("a/../b")?.contains("'..' component") == true)
        #expect(reason("a/./b")?.contains("'.' component") == true)
        #expect(reason("a//b")?.contains("empty component") == true)
        #expect(reason("a\0b")?.contains("NUL") == true)
        // ZIP's: a backslash counts as a separator for the checks, but stays in the path.
        #expect(reason("a\\..\\b")?.contains("'..' component") == true)
        #expect(reason("\\x")?.contains("absolute") == true)
        #expect(reason("C:x")?.contains("drive letter") == true)
        #expect(reason(String(repeating: "a", count: 256))?.contains("NAME_MAX") == true)
        #expect(reason("abc", limit: 2)?.contains("over the limit of 2") == true)
        let kept = try ZipNames.path(of: "a\\b/", maximumLength: 4095).get()
        #expect(kept.path.string == "a\\b" && kept.isDirectory)
        let twin = try ZipNames.path(of: "caf" + Self.nfd, maximumLength: 4095).get().path
        let other = try ZipNames.path(of: "caf" + Self.nfc, maximumLength: 4095).get().path
        #expect(twin != other)
        // The reserved name: the one check, plus the folding of a case-insensitive file system.
        for name in [".pkgtool", ".pkgtool/journal", ".PKGTOOL", ".p\u{212A}gtool/x", ".pkgtool. "] {
            #expect(ZipNames.isReservedTopLevel(RelativePath(validating: name)!), "\(name)")
        }
        for name in ["inner/.pkgtool", ".pkgtoolx", "pkgtool"] {
            #expect(!ZipNames.isReservedTopLevel(RelativePath(validating: name)!), "\(name)")
        }
    }

    @Test("archive file paths are split on the byte '/', not on Characters")
    func siblingPaths() {
        // "/" followed by a combining mark is one Character: a Character search misses it.
        #expect(Array(PreviousArchive.path(for: "dir/\u{301}x.zip").utf8) == Array("dir/.\u{301}x.zip.pkgtool-previous".utf8))
        #expect(Array(AppendRecord.path(for: "dir/\u{301}x.zip").utf8.prefix(4)) == Array("dir/".utf8))
        #expect(AppendRecovery.directory(of: "dir/\u{301}x.zip") == "dir")
    }
}
