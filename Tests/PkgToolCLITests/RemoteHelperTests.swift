import Foundation
import Testing
import PackageTestSupport
import PackageTestTraits

@testable import PkgToolCLI

/// pkgtool links no libcurl: the sync commands run in `pkgtool-remote`, which pkgtool execs
/// for them with the same arguments (Specs/cli.md). Always through real processes: an exec
/// in-process would replace the test runner.
@Suite("The sync commands' helper, pkgtool-remote")
struct RemoteHelperTests {
    static var helperBuilt: Bool {
        FileManager.default.isExecutableFile(
            atPath: (pkgtoolExecutable() as NSString).deletingLastPathComponent + "/" + RemoteHelper.programName)
    }

    @Test(
        "pkgtool needs no libcurl nor libcrypto; pkgtool-remote has them",
        Prerequisite.needs(helperBuilt, "pkgtool-remote built beside pkgtool"), Prerequisite.programs("ldd"))
    func linkedLibraries() throws {
        let ldd = try Prerequisite.program("ldd")
        let pkgtool = try runProgram(ldd, [pkgtoolExecutable()])
        #expect(pkgtool.status == 0)
        #expect(!pkgtool.output.contains("libcurl") && !pkgtool.output.contains("libcrypto"), "\(pkgtool.output)")
        let helper = try runProgram(ldd, [(pkgtoolExecutable() as NSString).deletingLastPathComponent + "/pkgtool-remote"])
        #expect(helper.output.contains("libcurl") && helper.output.contains("libcrypto"))
    }

    @Test("without pkgtool-remote: help and usage errors still answer, a transfer is one clear line and exit 2")
    func helperMissing() throws {
        let home = try TemporaryDirectory("lonely-pkgtool")
        let lonely = home.url("pkgtool")
        // A hard link where it can be: a copy is open for writing a moment, and a program
        // another test spawns meanwhile inherits that descriptor until it execs, making
        // the exec of the copy fail with ETXTBSY.
        if link(pkgtoolExecutable(), lonely) != 0 {
            try FileManager.default.copyItem(atPath: pkgtoolExecutable(), toPath: lonely)
        }
        try Files.makeDirectory(home.url("pkg"))
        let environment = ["PATH": "/usr/bin:/bin", "HOME": home.path]

        let help = try runProgram(lonely, ["push", "--help"], environment: environment)
        #expect(help.status == 0 && help.output.hasPrefix("usage: pkgtool push "))
        let usage = try runProgram(lonely, ["pull", "s3://bucket/prefix"], environment: environment)
        #expect(usage.status == 2 && usage.error.hasPrefix("pkgtool: 'pull' needs DEST after s3://bucket/prefix\n"))
        let onlyURL = try runProgram(lonely, ["push", "s3://bucket/prefix"], environment: environment)
        #expect(onlyURL.status == 2 && onlyURL.error.hasPrefix("pkgtool: 'push' needs PKG before s3://bucket/prefix\n"))

        for (command, arguments) in [("log", ["log", "s3://bucket/prefix"]), ("diff", ["diff", home.url("pkg"), "s3://bucket/prefix"])] {
            let result = try runProgram(lonely, arguments, environment: environment)
            #expect(result.status == 2, "\(command)")
            #expect(result.output.isEmpty)
            #expect(
                result.error == "pkgtool: cannot \(command): remotes are reached through pkgtool-remote, which is neither beside "
                    + "pkgtool nor on PATH; build it with 'swift build -c release --product pkgtool-remote' and keep it beside pkgtool\n")
        }
        // A local diff never needs the helper.
        let local = try runProgram(lonely, ["diff", home.url("pkg"), home.url("pkg")], environment: environment)
        #expect(local.status == 0 && local.error.isEmpty)
    }

    @Test(
        "with pkgtool-remote beside it, pkgtool runs the command there with every argument",
        Prerequisite.needs(helperBuilt, "pkgtool-remote built beside pkgtool"))
    func forwardsEveryArgument() throws {
        let home = try TemporaryDirectory("forwarded")
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_REGION": "us-east-1", "PKGTOOL_CACHE_DIR": home.url("cache"),
        ]
        // Nothing listens on port 1: the error names the endpoint given as an option, so the
        // helper saw it, and came back after one attempt (--retries 0).
        let result = try runProgram(
            pkgtoolExecutable(), ["log", "--retries", "0", "--endpoint", "http://127.0.0.1:1", "s3://bucket/prefix"],
            environment: environment)
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("pkgtool: cannot reach the S3 endpoint http://127.0.0.1:1"), "\(result.error)")
        #expect(result.error.split(separator: "\n").count == 1)
    }
}
