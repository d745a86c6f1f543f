import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import PackageTestTraits
import Testing
@testable import PkgToolCLI

@Suite("The command-line frame")
struct CLIFrameTests {
    @Test func noCommandPrintsUsageAndExits2() {
        let result = pkgtool()
        #expect(result.status == .trouble)
        #expect(result.output.isEmpty)
        #expect(result.errors.first?.hasPrefix("usage: pkgtool COMMAND") == true)
    }

    @Test func helpAndVersion() {
        for arguments in [["--help"], ["-h"], ["help"]] {
            let result = pkgtool(arguments)
            #expect(result.status == .success)
            #expect(result.output.contains("hash"))
        }
        let version = pkgtool("--version")
        #expect(version.status == .success && version.output == "pkgtool \(PkgTool.version)\n")
        for arguments in [["help", "hash"], ["hash", "--help"], ["hash", "-h"]] {
            let result = pkgtool(arguments)
            #expect(result.status == .success)
            #expect(result.output.hasPrefix("usage: pkgtool hash"))
        }
    }

    @Test func unknownCommandsAndFlags() {
        let unknown = pkgtool("frobnicate")
        #expect(unknown.status == .trouble)
        #expect(unknown.errors.first == "unknown command 'frobnicate'; 'pkgtool --help' lists them")
        let flag = pkgtool("hash", "--frob", "x")
        #expect(flag.status == .trouble)
        #expect(flag.errors == ["unknown option '--frob' for 'hash'", HashCommand.spec.usageLine])
        let help = pkgtool("help", "nope")
        #expect(help.status == .trouble)
    }

    @Test("the CLI calls no libc: every system call goes through PackageCore")
    func noLibc() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/PkgToolCLI").standardized.path
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 10)
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for module in ["Glibc", "Foundation", "CSystemShims", "Musl"] {
                #expect(!text.contains("import \(module)"), "\(file) imports \(module)")
            }
        }
    }

    @Test func everyCommandHasHelpNamingItsFlags() {
        for command in PkgTool.commands {
            let text = command.spec.helpText
            #expect(text.hasPrefix("usage: pkgtool \(command.spec.name)"))
            for option in command.spec.options { #expect(text.contains("--\(option.long)")) }
        }
    }

    /// Help is filled to 80 columns off a terminal, and to the terminal's width on one (a
    /// pseudo-terminal of 60 columns, through script(1)); nothing of it is lost.
    @Test func helpFitsTheWidth() throws {
        for command in PkgTool.commands where command.spec.name != "bench" {
            let text = pkgtool(command.spec.name, "--help").output
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "\(command.spec.name): \(line)")
            }
            let words = { (text: String) in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }
            #expect(words(text) == words(command.spec.helpText(width: 1000)), "\(command.spec.name)")
        }
        let overview = pkgtool("--help").output
        #expect(overview.split(separator: "\n").allSatisfy { $0.count <= 80 })
        let script = try #require(which("script"), "script(1) comes with util-linux (Scripts/dependencies.sh)")
        let onTerminal = try runProgram(
            script, ["-qec", "stty cols 60; '\(pkgtoolExecutable())' push --help", "/dev/null"])
        #expect(onTerminal.status == 0)
        let lines = onTerminal.output.split(whereSeparator: \.isNewline)
        #expect(lines.count > 10)
        for line in lines { #expect(line.count <= 60, "\(line)") }
    }
}

@Suite("pkgtool hash")
struct HashCommandTests {
    @Test func filesAndDirectories() throws {
        let directory = try TemporaryDirectory("cli-hash")
        try Files.write(directory.url("a.txt"), "hello\n")
        try Files.makeDirectory(directory.url("tree/sub"))
        try Files.write(directory.url("tree/sub/x"), "x")
        let file = pkgtool("hash", directory.url("a.txt"))
        #expect(file.status == .success)
        let fileHash = ContentHash.of(Array("hello\n".utf8))
        #expect(file.output == "\(fileHash)  \(directory.url("a.txt"))\n")
        let tree = pkgtool("hash", directory.url("tree"))
        let treeHash = try Trees.contentHash(directory.url("tree"))
        #expect(tree.output == "\(treeHash)  \(directory.url("tree"))\n")
        let json = pkgtool("hash", "--json", directory.url("a.txt"))
        #expect(json.output.contains("\"hash\": \"\(fileHash)\""))
        #expect(json.output.contains("\"size\": 6"))
    }

    /// `hash` with nothing but paths skips the parser (`HashCommand.plainArguments`); the same
    /// paths after `--` go through it: both print and exit alike, a missing path included.
    @Test func plainPathsAnswerAsParsedOnes() throws {
        let directory = try TemporaryDirectory("cli-hash-plain")
        try Files.write(directory.url("a.txt"), "hello\n")
        try Files.makeDirectory(directory.url("tree"))
        try Files.write(directory.url("tree/x"), "x")
        let paths = [directory.url("a.txt"), directory.url("tree"), directory.url("missing")]
        let plain = pkgtool(["hash"] + paths)
        let parsed = pkgtool(["hash", "--"] + paths)
        #expect(plain.status == .trouble && parsed.status == .trouble)
        #expect(plain.output == parsed.output && plain.errors == parsed.errors)
        #expect(plain.output.split(separator: "\n").count == 2)

        #expect(HashCommand.plainArguments(["hash", "a", "-", ""], commands: nil)?.positionals == ["a", "-", ""])
        #expect(HashCommand.plainArguments(["hash", "a"], commands: PkgTool.commands)?.positionals == ["a"])
        for arguments in [["hash"], ["hash", "--json", "a"], ["hash", "a", "--"], ["hash", "-j2", "a"], ["ls", "a"]] {
            #expect(HashCommand.plainArguments(arguments, commands: nil) == nil)
        }
        #expect(HashCommand.plainArguments(["hash", "a"], commands: [ListCommand.self]) == nil)
    }

    @Test func badInputIsOneLineAndExit2() throws {
        let directory = try TemporaryDirectory("cli-bad")
        try Files.symlink(directory.url("dangling"), to: directory.url("nowhere"))
        #expect(mkfifo(directory.url("fifo"), 0o644) == 0)
        try Files.makeDirectory(directory.url("locked"))

        let missing = pkgtool("hash", directory.url("missing"))
        #expect(missing.status == .trouble)
        #expect(missing.errors == ["cannot stat '\(directory.url("missing"))': No such file or directory (ENOENT from fstatat)"])

        let fifo = pkgtool("hash", directory.url("fifo"))
        #expect(fifo.status == .trouble)
        #expect(fifo.errors == ["cannot read '\(directory.url("fifo"))': is a FIFO, not a regular file"])

        let dangling = pkgtool("hash", directory.url("dangling"))
        #expect(dangling.status == .trouble)
        #expect(dangling.errors == ["cannot open '\(directory.url("dangling"))': dangling symbolic link to '\(directory.url("nowhere"))'"])

        // Root ignores permission bits, so EACCES is injected where the kernel would return it.
        let denied = IOFaultInjection.withInjector(
            FailingStep(.open, pathFragment: "locked", fault: .error(.permissionDenied))
        ) { pkgtool("hash", directory.url("locked")) }
        #expect(denied.status == .trouble)
        #expect(denied.errors == ["cannot open '\(directory.url("locked"))': Permission denied (EACCES from openat)"])

        // One bad path does not stop the others.
        try Files.write(directory.url("ok"), "ok")
        let mixed = pkgtool("hash", directory.url("missing"), directory.url("ok"))
        #expect(mixed.status == .trouble)
        #expect(mixed.output.hasSuffix("  \(directory.url("ok"))\n"))
    }

    @Test func specialFileInsideTreeIsANote() throws {
        let directory = try TemporaryDirectory("cli-note")
        try Files.write(directory.url("a"), "a")
        #expect(mkfifo(directory.url("pipe"), 0o644) == 0)
        let result = pkgtool("hash", directory.path)
        #expect(result.status == .success)
        #expect(result.errors == ["warning: skipped '\(directory.url("pipe"))': a FIFO is not package content"])
    }

    @Test func realBinaryMatchesXXHSum() throws {
        let xxhsum = try #require(which("xxhsum"))
        let directory = try TemporaryDirectory("cli-bin")
        try Files.writeRandom(directory.url("data"), size: 3 << 20, seed: 9)
        let ours = try runProgram(pkgtoolExecutable(), ["hash", directory.url("data")])
        let theirs = try runProgram(xxhsum, ["-H2", directory.url("data")])
        #expect(ours.status == 0)
        #expect(ours.output == theirs.output)
        let none = try runProgram(pkgtoolExecutable(), [])
        #expect(none.status == 2)
        #expect(none.error.hasPrefix("usage: pkgtool"))
        let missing = try runProgram(pkgtoolExecutable(), ["hash", directory.url("none")])
        #expect(missing.status == 2)
        #expect(missing.error.hasPrefix("pkgtool: cannot "))
        #expect(missing.error.split(separator: "\n").count == 1)
    }

    /// The real kernel check: pkgtool run as an unprivileged user.
    @Test(Prerequisite.needs(Prerequisite.canRunAsNobody, "root and setpriv to run as nobody"))
    func unreadableDirectoryAsAnotherUser() throws {
        try #require(getuid() == 0, "not root")
        let setpriv = try Prerequisite.program("setpriv")
        let directory = try TemporaryDirectory("cli-perm")
        try FileSystem.setPermissions(directory.path, 0o755)
        try Files.makeDirectory(directory.url("secret"))
        try FileSystem.setPermissions(directory.url("secret"), 0o700)
        let result = try runProgram(
            setpriv, ["--reuid=65534", "--regid=65534", "--clear-groups", pkgtoolExecutable(), "hash", directory.url("secret")])
        #expect(result.status == 2)
        #expect(result.error == "pkgtool: cannot open '\(directory.url("secret"))': Permission denied (EACCES from openat)\n")
    }
}

/// One progress line for every long command: drawn on a terminal's stderr (a
/// pseudo-terminal through script(1)) unless -q or --no-progress, never when stderr is not
/// a terminal, and erased when the command ends.
@Suite("Progress lines")
struct ProgressLineTests {
    @Test func theLineReadsAsRsyncsAndRclonesDo() {
        #expect(ProgressMeter.line(verb: "saving", completed: 0, total: nil, bytesPerSecond: 0, elapsed: 0) == "saving  0 B")
        #expect(
            ProgressMeter.line(verb: "saving", completed: 50 << 20, total: 200 << 20, bytesPerSecond: Double(25 << 20), elapsed: 2)
                == "saving  25%  50.0 MiB of 200.0 MiB  25.0 MiB/s  0:06 left")
        // No rate before the first percent: a file at a time would make it meaningless.
        #expect(
            ProgressMeter.line(verb: "verifying", completed: 692, total: 300 << 20, bytesPerSecond: 2300, elapsed: 5)
                == "verifying  0%  692 B of 300.0 MiB")
        #expect(ProgressMeter.duration(7) == "0:07" && ProgressMeter.duration(754) == "12:34" && ProgressMeter.duration(3723) == "1:02:03")
    }

    @Test func drawnOnATerminalUnlessQuietAndAlwaysErased() throws {
        let script = try #require(which("script"), "script(1) comes with util-linux (Scripts/dependencies.sh)")
        let directory = try TemporaryDirectory("progress")
        try Files.makeDirectory(directory.url("src"))
        try Files.writeRandom(directory.url("src/media.bin"), size: 8 << 20, seed: 3)
        let tool = pkgtoolExecutable()
        func onTerminal(_ command: String) throws -> String {
            let result = try runProgram(script, ["-qec", command, "/dev/null"], workingDirectory: directory.path)
            #expect(result.status == 0, "\(command): \(result.output)")
            return result.output
        }
        let commands = [
            ("saving", "'\(tool)' save --fsync none src doc.pkg"), ("packing", "'\(tool)' pack src a.zip"),
            ("verifying", "'\(tool)' verify a.zip"), ("unpacking", "'\(tool)' unpack a.zip out"),
            ("verifying", "'\(tool)' verify doc.pkg"),
        ]
        for (verb, command) in commands {
            let shown = try onTerminal(command)
            let drawn = try #require(shown.range(of: "\r\u{1B}[K\(verb)  ", options: .backwards), "\(command): \(shown.debugDescription)")
            #expect(shown[drawn.upperBound...].contains("\r\u{1B}[K"), "\(command): the line is erased")
        }
        for flag in ["-q", "--no-progress"] {
            let quiet = try onTerminal("'\(tool)' save \(flag) --fsync none src doc2\(flag).pkg")
            #expect(!quiet.contains("saving"), "\(flag): \(quiet.debugDescription)")
        }
        // Standard error not a terminal: no line, whatever the rest is.
        let piped = try runProgram(tool, ["pack", "src", "b.zip"], workingDirectory: directory.path)
        #expect(piped.status == 0 && piped.error.isEmpty, "\(piped.error)")
    }
}
