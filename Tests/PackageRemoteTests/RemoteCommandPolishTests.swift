import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// The remote commands as a person meets them (issue 29): the progress line, `--dry-run`,
/// `push --exclude`, and the messages of a typo and of a push with nothing new.
@Suite("Remote commands: progress, dry runs, exclusions, messages") struct RemoteCommandPolishTests {
    /// Every object under the fixture's bucket, with its size: what a dry run must not change.
    static func objects(_ fixture: RemoteFixture) throws -> [String] {
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        return try s3.list(bucket: fixture.bucket, prefix: "").objects.map { "\($0.key) \($0.size)" }.sorted()
    }

    /// A directory's tree hash and its sync record's bytes: what a dry run must not change.
    static func state(_ path: String) throws -> String {
        let record = (try? Files.read(path + "/.pkgtool/sync")).map { String(decoding: $0, as: UTF8.self) } ?? "-"
        return "\(try RemoteFixture.rootHash(path)) \(record)"
    }

    /// The progress lines drawn in a terminal's output: each text after an erase.
    static func drawings(_ output: String, verb: String) -> [String] {
        output.components(separatedBy: "\r\u{1B}[K").filter { $0.hasPrefix(verb + "  ") }
            .map { $0.components(separatedBy: "\r")[0].components(separatedBy: "\n")[0] }
    }

    @Test(.enabled(if: which("script") != nil))
    func pushAndPullDrawOneLineOfAFixedTotalAndEraseIt() throws {
        let fixture = try RemoteFixture("progress")
        let source = try fixture.makePackage("source", pages: 6, mediaSize: 4 << 20)
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let script = try #require(which("script"))
        let tool = PkgtoolProcess.executable
        let remote = fixture.location.description
        func onTerminal(_ command: String) throws -> String {
            let result = try runProgram(
                script, ["-qec", command, "/dev/null"], workingDirectory: fixture.path(""), environment: device.environment)
            #expect(result.status == 0, "\(command): \(result.output)")
            return result.output
        }
        for (verb, command) in [
            ("pushing", "'\(tool)' push --limit-rate 1m --transfers 1 '\(source)' \(remote)"),
            ("pulling", "'\(tool)' pull --limit-rate 1m --transfers 1 --fsync none \(remote) '\(fixture.path("copy"))'"),
        ] {
            let shown = try onTerminal(command)
            let lines = Self.drawings(shown, verb: verb)
            #expect(!lines.isEmpty, "\(verb): \(shown.debugDescription)")
            var totals = Set<String>()
            for line in lines {
                let fields = line.components(separatedBy: "  ")
                guard fields.count >= 3, fields[1].hasSuffix("%") else { continue }
                let percent = try #require(Int(fields[1].dropLast()), "\(line)")
                #expect((0...100).contains(percent), "\(line)")
                let figures = fields[2].components(separatedBy: " of ")
                #expect(figures.count == 2, "\(line)")
                totals.insert(figures.last ?? "")
            }
            #expect(totals.count == 1, "\(verb): the total never changes: \(lines)")
            // The last drawing is erased before the summary, which stays alone on its line.
            let last = try #require(shown.range(of: "\r\u{1B}[K\(verb)  ", options: .backwards))
            #expect(shown[last.upperBound...].contains("\r\u{1B}[K"), "\(verb): the line is erased")
        }
        #expect(try RemoteFixture.rootHash(fixture.path("copy")) == (try RemoteFixture.rootHash(source)))

        // -q: no line, no informational summary; --no-progress: the summary only.
        try Files.write(source + "/metadata.json", "{\"title\": \"quiet\"}")
        let quiet = try onTerminal("'\(tool)' push -q '\(source)' \(remote)")
        #expect(!quiet.contains("pushing") && !quiet.contains("pushed"), "\(quiet.debugDescription)")
        let plain = try onTerminal("'\(tool)' pull --no-progress --fsync none \(remote) '\(fixture.path("copy"))'")
        #expect(!plain.contains("pulling") && plain.contains("pulled version 2"), "\(plain.debugDescription)")
    }

    @Test func dryRunsListWhatWouldChangeAndChangeNothing() throws {
        let fixture = try RemoteFixture("dryrun")
        let remote = fixture.location.description
        let a = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let b = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let mine = try fixture.makePackage("mine", pages: 4, mediaSize: 1000)

        // A first push, previewed: the files it would send, the version it would make.
        let empty = try Self.objects(fixture)
        let before = try Self.state(mine)
        let preview = try a.run("push", "--dry-run", mine, remote)
        #expect(preview.status == 0, "\(preview.errors)")
        #expect(preview.output.contains("A\tmetadata.json\n"))
        #expect(preview.output.contains("would push \(mine) to \(remote) as version 1: "))
        #expect(try Self.objects(fixture) == empty, "no object written, not even the probe")
        #expect(try Self.state(mine) == before)
        #expect(try a.run("push", mine, remote).status == 0)

        // A change, previewed as M; the store as it was.
        try Files.write(mine + "/metadata.json", "{\"title\": \"changed\"}")
        let stored = try Self.objects(fixture)
        let changed = try a.run("push", "-n", "--json", mine, remote)
        #expect(changed.status == 0, "\(changed.errors)")
        let plan = try #require(try JSONSerialization.jsonObject(with: Data(changed.output.utf8)) as? [String: Any])
        #expect(plan["sequence"] as? Int == 2 && plan["created_version"] as? Bool == true)
        #expect((plan["files"] as? [[String: Any]])?.map { $0["path"] as? String } == ["metadata.json"])
        #expect(try Self.objects(fixture) == stored)

        // A pull into a new folder, previewed: nothing created, not even its staging area.
        let copy = fixture.path("copy")
        let fresh = try b.run("pull", "--dry-run", remote, copy)
        #expect(fresh.status == 0, "\(fresh.errors)")
        #expect(fresh.output.contains("A\tmetadata.json\n"))
        #expect(fresh.output.contains("would pull version 1 ("))
        #expect(try FileSystem.statusIfExists(copy) == nil)
        #expect(try FileSystem.statusIfExists(fixture.path(".copy.pkgtool-pull")) == nil)

        // A pull into a copy one version behind: the M line and bytes to download; the copy as it was.
        #expect(try b.run("pull", remote, copy).status == 0)
        #expect(try a.run("push", mine, remote).status == 0)
        let held = try Self.state(copy)
        let behind = try b.run("pull", "-n", remote, copy)
        #expect(behind.status == 0, "\(behind.errors)")
        #expect(behind.output.hasPrefix("M\tmetadata.json\nwould pull version 2 ("), "\(behind.output)")
        #expect(behind.output.contains("1 change, 1 blob ("))
        #expect(try Self.state(copy) == held)

        // A sync where both sides changed one file: the merge it would make, the conflict it
        // would create; neither the package nor the store changes.
        try Files.write(copy + "/metadata.json", "{\"title\": \"theirs\"}")
        try Files.write(copy + "/pages/a/page0.json", "{\"edited\": true}")
        let stateBefore = try Self.state(copy)
        let objectsBefore = try Self.objects(fixture)
        let sync = try b.run("sync", "--dry-run", copy)
        #expect(sync.status == 0, "\(sync.errors)")
        #expect(sync.output.contains("conflict\tmetadata.json\n"), "\(sync.output)")
        #expect(sync.output.contains("would merge version 2 ("), "\(sync.output)")
        #expect(sync.output.contains("1 new conflict version;"), "\(sync.output)")
        #expect(sync.output.contains("push the merge as version 3"))
        #expect(try Self.state(copy) == stateBefore)
        #expect(try Self.objects(fixture) == objectsBefore)
        #expect(try FileSystem.statusIfExists(copy + "/.pkgtool/conflicts") == nil)

        // A dry run is refused as the real command is (exit 1): the remote moved on.
        let refused = try b.run("push", "--dry-run", copy, remote)
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("pkgtool: the remote moved on: "), "\(refused.errors)")
    }

    @Test func pushLeavesOutWhatItExcludesAndThePackageKeepsIt() throws {
        let fixture = try RemoteFixture("exclude")
        let remote = fixture.location.description
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let mine = try fixture.makePackage("mine", pages: 4, mediaSize: 1000)
        try Files.write(mine + "/.DS_Store", "finder")
        try Files.makeDirectory(mine + "/cache")
        try Files.write(mine + "/cache/thumb.bin", "thumb")
        try Files.write(mine + "/notes.tmp", "scratch")

        let pushed = try device.run("push", "--exclude", "cache/", "--exclude", "*.tmp", mine, remote)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let paths = Set(try PackageRemote.snapshot(of: fixture.location, options: fixture.options()).snapshot.entries.map(\.path))
        #expect(paths.contains("metadata.json"))
        for left in [".DS_Store", "cache", "cache/thumb.bin", "notes.tmp"] { #expect(!paths.contains(left), "\(left)") }
        #expect(try Files.read(mine + "/.DS_Store") == Array("finder".utf8), "the package keeps what a push leaves out")

        // Pushed again with the same exclusions: nothing new. A sync keeps them out and in PKG.
        let again = try device.run("push", "--exclude", "cache/", "--exclude", "*.tmp", mine)
        #expect(again.output.contains("is up to date"), "\(again.output)")
        let sync = try device.run("sync", "--exclude", "cache/", "--exclude", "*.tmp", mine)
        #expect(sync.status == 0, "\(sync.errors)")
        #expect(sync.output.hasPrefix("\(mine) is in sync with \(remote)"), "\(sync.output)")
        #expect(try FileSystem.statusIfExists(mine + "/cache/thumb.bin") != nil)

        // --no-default-excludes: the litter is pushed too.
        let all = try device.run("push", "--no-default-excludes", "--exclude", "cache/", "--exclude", "*.tmp", mine)
        #expect(all.status == 0 && all.output.hasPrefix("pushed "), "\(all.output)\(all.errors)")
        let now = Set(try PackageRemote.snapshot(of: fixture.location, options: fixture.options()).snapshot.entries.map(\.path))
        #expect(now.contains(".DS_Store") && !now.contains("notes.tmp"))

        // A pull compares DEST whole: files a push left out are changes it would discard,
        // so it refuses and says so; they stay.
        let pull = try device.run("pull", mine)
        #expect(pull.status == 1)
        #expect(pull.errors.contains("has changes not pushed"), "\(pull.errors)")
        #expect(try FileSystem.statusIfExists(mine + "/notes.tmp") != nil)
    }

    @Test func aTypoInPKGIsToldBeforeCredentialsAndNothingNewIsNotCalledChanges() throws {
        let fixture = try RemoteFixture("messages")
        let remote = fixture.location.description
        var bare = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-x"))
        bare.extraEnvironment = [
            "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SHARED_CREDENTIALS_FILE": fixture.path("none"),
            "AWS_CONFIG_FILE": fixture.path("none"),
        ]
        for command in ["push", "sync"] {
            let typo = try bare.run(command, fixture.path("mnie"), remote)
            #expect(typo.status == 2)
            #expect(typo.errors.contains("mnie") && typo.errors.contains("No such file or directory"), "\(command): \(typo.errors)")
            #expect(!typo.errors.contains("credentials"), "\(command): \(typo.errors)")
        }
        let file = fixture.path("file.txt")
        try Files.write(file, "x")
        let notADirectory = try bare.run("push", file, remote)
        #expect(notADirectory.status == 2 && notADirectory.errors.contains("not a package directory"), "\(notADirectory.errors)")

        // B holds version 1 unchanged while A pushed version 2: nothing to push, said so.
        let a = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let mine = try fixture.makePackage("mine", pages: 2, mediaSize: 1000)
        #expect(try a.run("push", mine, remote).status == 0)
        let theirs = fixture.path("theirs")
        #expect(try a.run("pull", remote, theirs).status == 0)
        try Files.write(mine + "/metadata.json", "{\"title\": \"A's\"}")
        #expect(try a.run("push", mine, remote).status == 0)
        let stale = try a.run("push", theirs, remote)
        #expect(stale.status == 1)
        #expect(stale.errors.hasPrefix("pkgtool: nothing to push: '\(theirs)' has not changed since version 1 ("), "\(stale.errors)")
        #expect(stale.errors.contains("moved on to version 2"))
        #expect(!stale.errors.contains("these changes"))
        #expect(stale.errors.split(separator: "\n").count == 1)
    }
}
