import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

/// Issue 17, the archive side: archives carry no pkgtool state, checks stay linear in the
/// entries however deep the tree, modes come back as stored, and what reads two ways is
/// refused with a message that names the real fault.
@Suite("Untrusted archives (issue 17)")
struct UntrustedArchiveTests {
    typealias Entry = CraftedZip.Entry

    /// Refused by `verify` and `unpack` (exit 1, one line holding `phrase`), with nothing
    /// written: no DEST, no staging directory, an existing empty DEST left empty.
    func expectRefused(_ zip: CraftedZip, _ label: String, phrase: String, kind: ZipError.Kind? = nil) throws {
        let directory = try TemporaryDirectory("zip-untrusted")
        let archive = directory.url("a.zip")
        try zip.write(to: archive)
        if let kind {
            #expect(throws: ZipError.self, "\(label)") { _ = try ZipArchive.open(archive) }
            do { _ = try ZipArchive.open(archive) } catch let error as ZipError { #expect(error.kind == kind, "\(label): \(error)") }
        }
        let verified = pkgtool("verify", archive)
        #expect(verified.status == .failure && verified.errors.count == 1, "\(label): \(verified.errors)")
        #expect(verified.errors.first?.contains(phrase) == true, "\(label): \(verified.errors)")
        let unpacked = pkgtool("unpack", archive, directory.url("dest"))
        #expect(unpacked.status == .failure && unpacked.errors.count == 1, "\(label): \(unpacked.errors)")
        #expect(unpacked.errors.first?.contains(phrase) == true, "\(label): \(unpacked.errors)")
        #expect(try listing(directory.path) == ["a.zip"], "\(label): something was left behind")
        try Files.makeDirectory(directory.url("dest"))
        #expect(pkgtool("unpack", archive, directory.url("dest")).status == .failure)
        #expect(try listing(directory.url("dest")).isEmpty, "\(label)")
    }

    // MARK: No pkgtool state in archives

    @Test("the forged journal of issue 17 (.pkgtool/, journal, tmp/, tmp/n1) is refused; nothing of it reaches DEST")
    func forgedJournal() throws {
        let journal = Array("PKGJOURNAL\u{1}rename tmp/n1 -> /etc/evil\n".utf8)
        let zip = CraftedZip([
            Entry("doc.txt", "a document"), Entry.directory(".pkgtool/"), Entry(".pkgtool/journal", journal),
            Entry.directory(".pkgtool/tmp/"), Entry(".pkgtool/tmp/n1", "payload"),
        ])
        try expectRefused(zip, "forged journal", phrase: "entry '.pkgtool/': '.pkgtool' at the top holds pkgtool's own state", kind: .reservedName)
    }

    @Test("every spelling that could become .pkgtool is refused; deeper .pkgtool directories are content")
    func reservedSpellings() throws {
        for name in [".pkgtool", "./.pkgtool/journal", ".PKGTOOL/journal", ".PkgTool/", ".p\u{212A}gtool/journal"] {
            let entry = name.hasSuffix("/") ? Entry.directory(name) : Entry(name, "x")
            try expectRefused(CraftedZip([entry]), name, phrase: "pkgtool's own state", kind: .reservedName)
        }
        let directory = try TemporaryDirectory("zip-nested-state")
        try CraftedZip([Entry("inner/.pkgtool/journal", "x"), Entry(".pkgtools", "y")]).write(to: directory.url("n.zip"))
        #expect(pkgtool("unpack", directory.url("n.zip"), directory.url("out")).status == .success)
        #expect(try Files.read(directory.url("out/inner/.pkgtool/journal")) == Array("x".utf8))
    }

    @Test("pack never writes .pkgtool (journal, tmp, manifest), and refuses a top-level name that folds to it")
    func packWritesNoState() throws {
        let directory = try TemporaryDirectory("zip-pack-state")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/.pkgtool/tmp")
        try Files.write(source + "/.pkgtool/journal", "journal")
        try Files.write(source + "/.pkgtool/tmp/n1", "n1")
        try Files.write(source + "/doc.txt", "doc")
        #expect(pkgtool("pack", source, directory.url("a.zip")).status == .success)
        let archive = try ZipArchive.open(directory.url("a.zip"))
        #expect(archive.entries.map(\.path) == ["doc.txt"])

        try Files.makeDirectory(source + "/.PKGTOOL")
        let refused = pkgtool("pack", source, directory.url("b.zip"))
        #expect(refused.status == .trouble && refused.errors.count == 1, "\(refused.errors)")
        #expect(refused.errors.first?.contains("cannot pack '\(source)/.PKGTOOL': a top-level name that folds to '.pkgtool'") == true, "\(refused.errors)")
        #expect(try FileSystem.statusIfExists(directory.url("b.zip")) == nil)
    }

    // MARK: Depth

    /// `a/`, `a/a/`, … `depth` directories deep (1-character names: 2,047 of them make a
    /// 4,093-byte path, within the 4,095-byte limit).
    static func nested(depth: Int, file: Bool = false) -> CraftedZip {
        var entries = (1...depth).map { Entry.directory(String(repeating: "a/", count: $0)) }
        if file { entries.append(Entry(String(repeating: "a/", count: depth) + "f", "deepest")) }
        return CraftedZip(entries)
    }

    /// Follows `a` `depth` times from `root` by descriptor (the path is too long for one call).
    func deepest(_ root: String, depth: Int) throws -> FileDescriptor {
        var handle = try FileDescriptor.openDirectory(root)
        for _ in 0..<depth { handle = try FileDescriptor.openDirectory("a", relativeTo: handle.rawValue) }
        return handle
    }

    @Test("2,047 nested directory entries verify, list and unpack (linear checks: see Specs/zip.md for the times)")
    func deepNesting() throws {
        let directory = try TemporaryDirectory("zip-deep")
        let archive = directory.url("deep.zip")
        try Self.nested(depth: 2047, file: true).write(to: archive)
        let verified = pkgtool("verify", archive)
        #expect(verified.status == .success, "\(verified.errors)")
        let listed = pkgtool("ls", archive)
        #expect(listed.status == .success && listed.output.split(separator: "\n").count == 2048)
        let unpacked = pkgtool("unpack", archive, directory.url("out"))
        #expect(unpacked.status == .success, "\(unpacked.errors)")
        let bottom = try deepest(directory.url("out"), depth: 2047)
        #expect(try DirectoryListing.names(in: bottom) == ["f"])
        #expect(try FileSystem.status("f", relativeTo: bottom.rawValue).size == 7)
        #expect(try bottom.status().permissions == 0o755)

        // Only implied directories (one entry at the bottom), and an archive over the entry limit.
        let implied = CraftedZip([Entry(String(repeating: "b/", count: 2047) + "f", "x")])
        try implied.write(to: directory.url("implied.zip"))
        #expect(try ZipArchive.open(directory.url("implied.zip")).snapshot().entries.count == 2048)
        #expect(pkgtool("unpack", directory.url("implied.zip"), directory.url("implied")).status == .success)
        let limited = pkgtool("verify", "--max-entries", "2000", directory.url("implied.zip"))
        #expect(limited.status == .failure && limited.errors.first?.contains("directories their paths imply") == true)
        // A tree this deep needs a descriptor per level to remove recursively: rm does it in bounded space.
        _ = try runProgram("/bin/rm", ["-rf", directory.url("out"), directory.url("implied")])
    }

    @Test("branches deep in the tree: every directory gets its own mode and time, whichever descriptors were kept")
    func deepBranches() throws {
        // A chain of 300 `a` directories; every 7th level also has a `b` directory with a file.
        // Modes differ by level, so a mode set through the wrong descriptor shows.
        func mode(_ level: Int) -> UInt32 { [0o755, 0o750, 0o711, 0o700, 0o705][level % 5] }
        var entries: [Entry] = []
        for level in 1...300 {
            let chain = String(repeating: "a/", count: level)
            entries.append(Self.withMode(Entry.directory(chain), 0o040000 | mode(level)))
            if level % 7 == 0 {
                entries.append(Self.withMode(Entry.directory(chain + "b/"), 0o040000 | mode(level + 1)))
                entries.append(Entry(chain + "b/f", "level \(level)"))
            }
        }
        let directory = try TemporaryDirectory("zip-branches")
        try CraftedZip(entries.reversed()).write(to: directory.url("b.zip"))  // children before parents
        #expect(pkgtool("unpack", directory.url("b.zip"), directory.url("out")).status == .success)
        var handle = try FileDescriptor.openDirectory(directory.url("out"))
        for level in 1...300 {
            handle = try FileDescriptor.openDirectory("a", relativeTo: handle.rawValue)
            #expect(try handle.status().permissions == mode(level), "level \(level)")
            if level % 7 == 0 {
                #expect(try FileSystem.status("b", relativeTo: handle.rawValue).permissions == mode(level + 1), "b at \(level)")
                let file = try FileDescriptor.open("b/f", relativeTo: handle.rawValue)
                var bytes = [UInt8](repeating: 0, count: 32)
                let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0) }
                #expect(Array(bytes[..<count]) == Array("level \(level)".utf8))
            }
        }
    }

    @Test("a chain of exactly 40 links is kept and works; one more is refused as too long, not as a loop")
    func linkChains() throws {
        let directory = try TemporaryDirectory("zip-chain")
        var entries = [Entry("end.txt", "end")]
        entries += (1...40).map { Entry.symlink("d\($0)/l", to: $0 == 40 ? "../end.txt" : "../d\($0 + 1)/l") }
        try CraftedZip(entries).write(to: directory.url("ok.zip"))
        #expect(pkgtool("unpack", directory.url("ok.zip"), directory.url("out")).status == .success)
        // The kernel follows the 40 links too.
        #expect(try Files.read(directory.url("out/d1/l")) == Array("end".utf8))

        entries = [Entry("end.txt", "end")] + (1...41).map { Entry.symlink("d\($0)/l", to: $0 == 41 ? "../end.txt" : "../d\($0 + 1)/l") }
        try expectRefused(CraftedZip(entries), "41 links", phrase: "a chain of more than 40 links", kind: .symlinkEscape)
    }

    // MARK: Modes

    /// An entry whose external attributes hold `mode` in the upper 16 bits.
    static func withMode(_ entry: Entry, _ mode: UInt32, host: UInt16 = 3) -> Entry {
        var entry = entry
        entry.externalAttributes = mode << 16 | (mode & 0o170000 == 0o040000 ? 0x10 : 0)
        entry.versionMadeBy = host << 8 | 30
        return entry
    }

    @Test("modes: 0000 comes back 0000 (files and directories, children still written); no Unix mode means 0644/0755; set-id bits stripped")
    func modes() throws {
        let directory = try TemporaryDirectory("zip-modes")
        var noMode = Entry("dos.txt", "dos")
        noMode.versionMadeBy = 0 << 8 | 20  // MS-DOS: the external attributes hold no Unix mode
        noMode.externalAttributes = 0x20
        var zeroUpper = Entry("zero-upper.txt", "unix host, no mode")
        zeroUpper.externalAttributes = 0
        var dosDirectory = Entry.directory("dos-dir/")
        dosDirectory.versionMadeBy = 0 << 8 | 20
        dosDirectory.externalAttributes = 0x10
        let zip = CraftedZip([
            Self.withMode(Entry("none.txt", "0000"), 0o100000),
            Self.withMode(Entry.directory("locked/"), 0o040000),
            Self.withMode(Entry("locked/inside.txt", "written before the lock"), 0o100640),
            Self.withMode(Entry.directory("locked/deeper/"), 0o040000),
            Self.withMode(Entry("locked/deeper/x", "x"), 0o100400),
            Self.withMode(Entry("setuid", "s"), 0o104755),
            Self.withMode(Entry("sticky-group", "s"), 0o103775),
            noMode, zeroUpper, dosDirectory,
        ])
        try zip.write(to: directory.url("m.zip"))
        #expect(pkgtool("unpack", directory.url("m.zip"), directory.url("out")).status == .success)
        func mode(_ path: String) throws -> UInt32 { try FileSystem.status(directory.url("out/" + path)).permissions }
        #expect(try mode("none.txt") == 0)
        #expect(try mode("setuid") == 0o755)
        #expect(try mode("sticky-group") == 0o775)
        #expect(try mode("dos.txt") == 0o644)
        #expect(try mode("zero-upper.txt") == 0o644)
        #expect(try mode("dos-dir") == 0o755)
        // Opened up one level at a time, so that a user other than root can look inside.
        #expect(try mode("locked") == 0)
        try FileSystem.setPermissions(directory.url("out/locked"), 0o700)
        #expect(try mode("locked/deeper") == 0)
        #expect(try mode("locked/inside.txt") == 0o640)
        try FileSystem.setPermissions(directory.url("out/locked/deeper"), 0o700)
        #expect(try mode("locked/deeper/x") == 0o400)
        #expect(try Files.read(directory.url("out/locked/deeper/x")) == Array("x".utf8))
        let archive = try ZipArchive.open(directory.url("m.zip"))
        #expect(archive.entry(at: "none.txt")?.permissions == 0)
        #expect(archive.entry(at: "dos.txt")?.permissions == 0o644)
    }

    @Test(
        "a chmod 000 file and directory packed by pkgtool and by Info-ZIP zip round-trip as 000",
        Prerequisite.needs(Prerequisite.isRoot, "root, to read a 000 file"), Prerequisite.programs("zip"))
    func zeroModesRoundTrip() throws {
        // Only root can read a 000 file to pack it.
        try #require(getuid() == 0, "not root")
        _ = try Prerequisite.program("zip")
        let directory = try TemporaryDirectory("zip-000")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/shut")
        try Files.write(source + "/shut/secret.txt", "secret")
        try Files.write(source + "/closed.txt", "closed")
        try FileSystem.setPermissions(source + "/closed.txt", 0)
        try FileSystem.setPermissions(source + "/shut/secret.txt", 0)
        try FileSystem.setPermissions(source + "/shut", 0)
        #expect(pkgtool("pack", source, directory.url("ours.zip")).status == .success)
        var archives = ["ours.zip"]
        do {
            let made = try runProgram("/bin/sh", ["-c", "cd '\(source)' && zip -qry '\(directory.url("info.zip"))' ."])
            #expect(made.status == 0, "\(made.error)")
            archives.append("info.zip")
        }
        for name in archives {
            let out = directory.url(name + ".out")
            let unpacked = pkgtool("unpack", directory.url(name), out)
            #expect(unpacked.status == .success, "\(name): \(unpacked.errors)")
            #expect(try FileSystem.status(out + "/closed.txt").permissions == 0, "\(name)")
            #expect(try FileSystem.status(out + "/shut").permissions == 0, "\(name)")
            #expect(try FileSystem.status(out + "/shut/secret.txt").permissions == 0, "\(name)")
            #expect(try Files.read(out + "/shut/secret.txt") == Array("secret".utf8), "\(name)")
            #expect(try treeDifferences(source, out) == [], "\(name)")
        }
    }

    @Test("an existing empty DEST keeps its own mode (0700, setgid), and its owner and group")
    func destinationKeepsItsMode() throws {
        let directory = try TemporaryDirectory("zip-dest-mode")
        try CraftedZip([Entry("a.txt", "a"), Entry.directory("d/")]).write(to: directory.url("x.zip"))
        for mode: UInt32 in [0o700, 0o2750, 0o555] {
            let destination = directory.url("dest-\(String(mode, radix: 8))")
            try Files.makeDirectory(destination)
            try FileSystem.setPermissions(destination, mode)
            let unpacked = pkgtool("unpack", directory.url("x.zip"), destination)
            #expect(unpacked.status == .success, "\(unpacked.errors)")
            #expect(try FileSystem.status(destination).permissions == mode)
            #expect(try listing(destination) == ["a.txt", "d"])
            try FileSystem.setPermissions(destination, 0o755)
        }
        // A new DEST gets 0755.
        #expect(pkgtool("unpack", directory.url("x.zip"), directory.url("new")).status == .success)
        #expect(try FileSystem.status(directory.url("new")).permissions == 0o755)
    }

    @Test(
        "an existing DEST owned by another user keeps its owner; where it cannot be kept, nothing is written",
        Prerequisite.needs(Prerequisite.isRoot, "root, to give a folder to another user"))
    func destinationKeepsItsOwner() throws {
        let directory = try TemporaryDirectory("zip-dest-owner")
        try CraftedZip([Entry("a.txt", "a"), Entry.directory("d/")]).write(to: directory.url("x.zip"))
        let owned = directory.url("owned")
        try Files.makeDirectory(owned)
        try FileSystem.setPermissions(owned, 0o750)
        #expect(chown(owned, 12345, 23456) == 0)
        #expect(pkgtool("unpack", directory.url("x.zip"), owned).status == .success)
        let status = try FileSystem.status(owned)
        #expect(status.userID == 12345 && status.groupID == 23456 && status.permissions == 0o750)

        // Where the owner cannot be kept (a user who may not give files away), nothing is written.
        let other = directory.url("other")
        try Files.makeDirectory(other)
        #expect(chown(other, 12345, 23456) == 0)
        let archive = try ZipArchive.open(directory.url("x.zip"))
        #expect {
            try IOFaultInjection.withInjector(FailNth(.setPermissions, index: 1, error: .notPermitted)) {
                try archive.extract(to: other, workers: 1)
            }
        } throws: { error in
            "\(error)".contains("belongs to user 12345, group 23456") && "\(error)".contains("EPERM")
        }
        #expect(try listing(other).isEmpty)
        #expect(try FileSystem.status(other).userID == 12345)
        #expect(try listing(directory.path).allSatisfy { !$0.contains(".pkgtool-") })
    }

    // MARK: Ambiguity and messages

    /// An extended-timestamp field: flags, then the times the flags announce.
    static func extendedTime(flags: UInt8, _ times: [UInt32]) -> [UInt8] {
        let data = [flags] + times.flatMap { le32($0) }
        return le16(0x5455) + le16(UInt16(data.count)) + data
    }

    @Test("local and central extended timestamps must agree; Info-ZIP's layout (atime only in the local field) is fine")
    func extendedTimestamps() throws {
        var agreeing = Entry("t.txt", "t")
        agreeing.localExtra = Self.extendedTime(flags: 3, [1_700_000_000, 1_700_000_100])
        agreeing.centralExtra = Self.extendedTime(flags: 3, [1_700_000_000])
        let directory = try TemporaryDirectory("zip-xtime")
        try CraftedZip([agreeing]).write(to: directory.url("ok.zip"))
        let archive = try ZipArchive.open(directory.url("ok.zip"))
        #expect(archive.entries.map(\.modificationTime) == [Int64(1_700_000_000) * 1_000_000_000])

        var disagreeing = agreeing
        disagreeing.localExtra = Self.extendedTime(flags: 1, [1_600_000_000])
        try expectRefused(CraftedZip([disagreeing]), "0x5455", phrase: "extended timestamps (0x5455) disagree", kind: .inconsistent)
        var missing = agreeing
        missing.localExtra = Self.extendedTime(flags: 0, [])
        try expectRefused(CraftedZip([missing]), "0x5455 without mtime", phrase: "local none, central 1700000000", kind: .inconsistent)
    }

    @Test("paths of 4,095 bytes unpack; 4,096 are refused by verify and unpack alike, saying why")
    func nameLimit() throws {
        // 16 components of 254 bytes, then one that pads the path to the length wanted.
        func path(_ length: Int, last: Character = "z") -> String {
            var components = (0..<16).map { String(repeating: Character(UnicodeScalar(UInt8(97 + $0))), count: 254) }
            let used = components.reduce(0) { $0 + $1.utf8.count + 1 }
            components.append(String(repeating: last, count: length - used))
            return components.joined(separator: "/")
        }
        let directory = try TemporaryDirectory("zip-name-limit")
        let longest = path(4095)
        #expect(longest.utf8.count == 4095)
        // A directory's trailing slash does not count: 4,096 bytes stored, a 4,095-byte path.
        try CraftedZip([Entry(longest, "long"), Entry.directory(path(4095, last: "y") + "/")]).write(to: directory.url("ok.zip"))
        #expect(pkgtool("verify", directory.url("ok.zip")).status == .success)
        let unpacked = pkgtool("unpack", directory.url("ok.zip"), directory.url("out"))
        #expect(unpacked.status == .success, "\(unpacked.errors)")
        // DEST's path and the name together pass PATH_MAX: read by descriptor.
        let out = try FileDescriptor.openDirectory(directory.url("out"))
        let file = try FileDescriptor.open(longest, relativeTo: out.rawValue)
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0) }
        #expect(Array(bytes[..<count]) == Array("long".utf8))

        try expectRefused(CraftedZip([Entry(path(4096), "x")]), "4096", phrase: "the path is 4096 bytes long, over the limit of 4095", kind: .limit)

        // Link targets: 4,095 bytes is the most symlinkat takes.
        let target = String(repeating: "t/", count: 2047) + "t"
        try CraftedZip([Entry.symlink("l", to: target)]).write(to: directory.url("link.zip"))
        #expect(pkgtool("unpack", directory.url("link.zip"), directory.url("link")).status == .success)
        #expect(try FileSystem.readSymbolicLink(directory.url("link/l")) == target)
        try expectRefused(
            CraftedZip([Entry.symlink("l", to: target + "t")]), "target 4096", phrase: "the link target is 4096 bytes, over the limit of 4095",
            kind: .limit)
    }

    @Test("messages name the real fault: an offset lie, a directory entry without its slash")
    func messages() throws {
        // The central record puts the only entry's local header 10 bytes late: not a prefix.
        var late = Entry("a.txt", "some text here")
        late.centralOffset = 10
        try expectRefused(CraftedZip([late]), "offset lie", phrase: "is wrong: the file starts with a local header", kind: .inconsistent)
        // An offset past all data, into the central directory.
        var past = Entry("b.txt", "b")
        past.centralOffset = 80  // the central directory starts at 72
        try expectRefused(CraftedZip([Entry("a.txt", "a"), past]), "offset past", phrase: "points past the entries' data")
        // A real prefix is still called one.
        var prefixed = CraftedZip([Entry("a.txt", "a")])
        prefixed.prefix = Array("#!/bin/sh\nexit 0\n".utf8)
        try expectRefused(prefixed, "prefix", phrase: "precede", kind: .junk)
        // A directory by its mode, without the trailing slash.
        var bare = Entry("dir", [UInt8]())
        bare.externalAttributes = 0o040755 << 16 | 0x10
        try expectRefused(CraftedZip([bare]), "no slash", phrase: "whose name lacks the trailing '/'", kind: .inconsistent)
    }

    // MARK: Twins

    @Test("case-only and normalisation-only twins are both extracted on a case-sensitive destination")
    func twinsOnLinux() throws {
        let directory = try TemporaryDirectory("zip-twins")
        try CraftedZip([
            Entry("A.txt", "upper"), Entry("a.txt", "lower"), Entry("caf\u{E9}", "nfc"), Entry("cafe\u{301}", "nfd"),
            Entry.directory("Dir/"), Entry.directory("dir/"),
        ]).write(to: directory.url("t.zip"))
        #expect(pkgtool("unpack", directory.url("t.zip"), directory.url("out")).status == .success)
        #expect(try listing(directory.url("out")).count == 6)
        #expect(try Files.read(directory.url("out/a.txt")) == Array("lower".utf8))
    }

    @Test("on a destination that folds names, the second twin is refused naming both entries, nothing left behind")
    func twinsOnFoldingDestination() throws {
        // No case-folding file system can be mounted here, so the fold is simulated where
        // the file system would show it: the second twin's create fails with EEXIST.
        let directory = try TemporaryDirectory("zip-folding")
        try CraftedZip([
            Entry("A.txt", "upper"), Entry("a.txt", "lower"), Entry("caf\u{E9}", "nfc"), Entry("cafe\u{301}", "nfd"),
            Entry.directory("Dir-Twin/"), Entry.directory("dir-twin/"), Entry.symlink("Link", to: "A.txt"), Entry.symlink("LINK", to: "a.txt"),
        ]).write(to: directory.url("t.zip"))
        let archive = try ZipArchive.open(directory.url("t.zip"))
        let cases: [(IOStep, String, String, String)] = [
            (.create, "a.txt", "a.txt", "A.txt"), (.create, "cafe\u{301}", "cafe\u{301}", "caf\u{E9}"),
            (.makeDirectory, "dir-twin", "dir-twin/", "Dir-Twin/"), (.symlink, "LINK", "LINK", "Link"),
        ]
        for (step, fragment, mine, theirs) in cases {
            let out = directory.url("out")
            #expect {
                try IOFaultInjection.withInjector(FailingStep(step, pathFragment: fragment, fault: .error(.fileExists))) {
                    try archive.extract(to: out, workers: 2)
                }
            } throws: { error in
                guard let refusal = error as? ZipError, refusal.kind == .ambiguous else { return false }
                return refusal.entry == mine && refusal.reason.contains("entry '\(theirs)'")
                    && refusal.reason.contains("folds case or Unicode normalisation")
            }
            #expect(try listing(directory.path) == ["t.zip"], "\(mine)")
        }
    }
}
