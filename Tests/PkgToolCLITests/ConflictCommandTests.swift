import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PkgToolCLI

/// `pkgtool conflicts` and `pkgtool resolve` (issue 26): local, no network; and the line
/// `sync` is checked on before pkgtool hands it to pkgtool-remote.
@Suite("Conflict commands")
struct ConflictCommandTests {
    let version = String(repeating: "ab", count: 32)

    /// A saved package holding `pages/1.txt` ("mine") and a listed conflict version of it
    /// ("theirs", the other side's), plus a local deletion of `notes.txt` whose other
    /// version the tree holds.
    func packageWithConflicts(_ home: TemporaryDirectory) throws -> String {
        let source = home.url("src")
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/pages/1.txt", "mine\n")
        try Files.write(source + "/notes.txt", "their notes\n")
        let package = home.url("doc.pkg")
        #expect(pkgtool("save", source, package).status == .success)
        let theirs = Array("theirs\n".utf8)
        try Files.write(home.url("theirs"), theirs)
        try ConflictStore.keepContent(
            from: home.url("theirs"), hash: ContentHash.of(theirs), size: Int64(theirs.count), packagePath: package,
            durability: .none)
        let list = ConflictList([
            ConflictVersion(
                path: "pages/1.txt", side: .other, kind: .file, permissions: 0o644, size: Int64(theirs.count),
                hash: ContentHash.of(theirs), linkTarget: nil, remoteVersion: version, time: 1_796_183_450_123_000_000),
            ConflictVersion(
                path: "notes.txt", side: .local, kind: .deleted, permissions: 0, size: 0, hash: ContentHash(high: 0, low: 0),
                linkTarget: nil, remoteVersion: version, time: 1_796_183_450_123_000_000),
        ])
        try ConflictStore.writeRecord(list.encoded(), packagePath: package, durability: .none)
        return package
    }

    @Test func conflictsListsEachVersionAsOneLine() throws {
        let home = try TemporaryDirectory("conflicts-list")
        let package = try packageWithConflicts(home)
        let listed = pkgtool("conflicts", package)
        #expect(listed.status == .success)
        let expected =
            "local\tdeleted\t-\tabababababab\t2026-12-02T03:50:50.123Z\tnotes.txt\n"
            + "other\tfile\t\(ContentHash.of(Array("theirs\n".utf8)))\tabababababab\t2026-12-02T03:50:50.123Z\tpages/1.txt\n"
        #expect(listed.output == expected)
        let json = pkgtool("conflicts", "--json", package)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(array.map { $0["path"] as? String } == ["notes.txt", "pages/1.txt"])
        #expect(array[0]["hash"] is NSNull && array[0]["kind"] as? String == "deleted")
        #expect(array[1]["hash"] as? String == ContentHash.of(Array("theirs\n".utf8)).description)
        #expect(array[1]["version"] as? String == version && array[1]["mode"] as? String == "0644")
        #expect(array[1]["time"] as? String == "2026-12-02T03:50:50.123Z")

        // None left: nothing printed (an empty array in JSON), exit 0.
        let plain = home.url("plain")
        try Files.makeDirectory(plain)
        let none = pkgtool("conflicts", plain)
        #expect(none.status == .success && none.output.isEmpty && none.errors.isEmpty)
        #expect(pkgtool("conflicts", "--json", plain).output == "[]\n")
        // Missing: trouble; a damaged record: refused, one line.
        #expect(pkgtool("conflicts", home.url("absent")).status == .trouble)
        try Files.write(package + "/.pkgtool/conflicts/list", "pkgtool-conflicts 1\nnonsense\n")
        let damaged = pkgtool("conflicts", "--json", package)
        #expect(damaged.status == .failure)
        #expect(damaged.errors.count == 1 && damaged.errors[0].contains("its line 2 is not a conflict version"), "\(damaged.errors)")
        #expect(damaged.output.contains("\"error\""))  // --json still prints JSON
    }

    @Test func resolveKeepsWhatItIsAskedTo() throws {
        let home = try TemporaryDirectory("conflicts-resolve")
        let package = try packageWithConflicts(home)
        let theirs = ContentHash.of(Array("theirs\n".utf8))

        let other = pkgtool("resolve", "--keep", "other", package, "pages/1.txt/")
        #expect(other.status == .success, "\(other.errors)")
        #expect(other.output == "resolved pages/1.txt: kept other (1 conflict version settled)\n")
        #expect(try Files.read(package + "/pages/1.txt") == Array("theirs\n".utf8))
        // Its bytes are no longer kept; the other conflict stays listed.
        #expect(try FileSystem.statusIfExists(ConflictStore.contentPath(package, hash: theirs, size: 7)) == nil)
        #expect(pkgtool("conflicts", package).output.hasPrefix("local\tdeleted\t"))

        // --keep local where the tree took the other side: PKG's deletion comes back.
        let local = pkgtool("resolve", package, "notes.txt", "--keep=local", "--json")
        #expect(local.status == .success, "\(local.errors)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(local.output.utf8)) as? [String: Any])
        #expect(report["keep"] as? String == "local" && (report["settled"] as? [Any])?.count == 1)
        #expect(try FileSystem.statusIfExists(package + "/notes.txt") == nil)
        #expect(pkgtool("conflicts", package).output.isEmpty)
        #expect(pkgtool("verify", package).status == .success)
    }

    @Test func resolveBothWritesACopyNamedForTodayAndThisHost() throws {
        let home = try TemporaryDirectory("conflicts-both")
        let package = try packageWithConflicts(home)
        let both = pkgtool("resolve", "--keep", "both", package, "pages")
        #expect(both.status == .success, "\(both.errors)")
        let day = CalendarTime.today()
        let host = CalendarTime.hostName()
        let copy = "1 (conflict \(day)\(host.isEmpty ? "" : " " + host)).txt"
        #expect(try Files.read(package + "/pages/" + copy) == Array("theirs\n".utf8))
        #expect(try Files.read(package + "/pages/1.txt") == Array("mine\n".utf8))
        #expect(both.output == "resolved pages: kept both; the other is \(NameQuoting.quoted("pages/" + copy)) (1 conflict version settled)\n")
    }

    @Test func badRequestsAreOneLineWithTheirStatus() throws {
        let home = try TemporaryDirectory("conflicts-bad")
        let package = try packageWithConflicts(home)
        let unknown = pkgtool("resolve", "--keep", "local", package, "pages/2.txt")
        #expect(unknown.status == .failure)
        #expect(unknown.errors == ["'\(package)' lists no conflict at 'pages/2.txt'"])
        let missingKeep = pkgtool("resolve", package, "pages/1.txt")
        #expect(missingKeep.status == .trouble)
        #expect(missingKeep.errors.first == "'resolve' needs --keep local, other or both")
        let badKeep = pkgtool("resolve", "--keep", "mine", package, "pages/1.txt")
        #expect(badKeep.status == .trouble)
        #expect(badKeep.errors.first == "--keep expects one of local, other, both, not 'mine'")
        for path in ["/etc/passwd", "../x", "a//b", ".", "", "./pages"] {
            let refused = pkgtool("resolve", "--keep", "local", package, path)
            #expect(refused.status == .trouble, "\(path)")
            #expect(refused.errors.first?.contains("is not a path inside a package") == true, "\(path): \(refused.errors)")
        }
        #expect(pkgtool("resolve", "--keep", "local", home.url("absent"), "x").status == .trouble)
        // Nothing was settled by any of them.
        #expect(pkgtool("conflicts", package).output.split(separator: "\n").count == 2)
    }

    @Test func syncIsCheckedBeforeItIsHandedOn() throws {
        func parsed(_ arguments: [String]) throws -> ParsedArguments { try parseArguments(arguments, spec: SyncCommand.spec) }
        let both = try SyncCommand.operands(try parsed(["doc", "s3://bucket/p"]))
        #expect(both.package == "doc" && both.remote == "s3://bucket/p")
        let remembered = try SyncCommand.operands(try parsed(["--fsync", "none", "doc"]))
        #expect(remembered.package == "doc" && remembered.remote == nil)
        #expect {
            try SyncCommand.operands(try parsed(["s3://bucket/p"]))
        } throws: { error in
            (error as? UsageError)?.message == "'sync' needs PKG before s3://bucket/p"
        }
        #expect(throws: UsageError.self) { try parsed([]) }
        #expect(throws: UsageError.self) { try parsed(["a", "b", "c"]) }
        let badFsync = pkgtool("sync", "--fsync", "some", "doc")
        #expect(badFsync.status == .trouble && badFsync.errors.first?.contains("--fsync expects one of") == true)
    }

    @Test func mistypedNamesAreSuggested() {
        let names = PkgTool.commands.map { $0.spec.name }
        #expect(Suggestions.closest(to: "snyc", among: names) == "sync")
        #expect(Suggestions.closest(to: "conflict", among: names) == "conflicts")
        #expect(Suggestions.closest(to: "reslove", among: names) == "resolve")
        #expect(Suggestions.closest(to: "sav", among: names) == "save")
        #expect(pkgtool("resolve", "--kep", "local", "a", "b").errors.first?.contains("did you mean '--keep'?") == true)
    }

    /// PATH's trailing slashes go by bytes: a "/" after a prepended mark (U+0600, one
    /// character with it) goes alone, and twins (`é`, `e\u{301}`) stay the names given.
    @Test func resolvePathsLoseOnlyTheirTrailingSlashBytes() throws {
        #expect(Array(try ResolveCommand.conflictPath("pages/x\u{600}/").string.utf8) == Array("pages/x\u{600}".utf8))
        #expect(Array(try ResolveCommand.conflictPath("\u{e9}//").string.utf8) == [0xC3, 0xA9])
        #expect(Array(try ResolveCommand.conflictPath("e\u{301}/").string.utf8) == [0x65, 0xCC, 0x81])
        #expect(throws: UsageError.self) { try ResolveCommand.conflictPath("/") }
        #expect(throws: UsageError.self) { try ResolveCommand.conflictPath("a/../b/") }
    }

    @Test func timesAreISOInUTC() {
        #expect(CalendarTime.iso(0) == "1970-01-01T00:00:00.000Z")
        #expect(CalendarTime.iso(1_796_183_450_123_000_000) == "2026-12-02T03:50:50.123Z")
        #expect(CalendarTime.iso(-1) == "1969-12-31T23:59:59.999Z")
        #expect(CalendarTime.iso(86_399_999_999_999) == "1970-01-01T23:59:59.999Z")
    }
}
