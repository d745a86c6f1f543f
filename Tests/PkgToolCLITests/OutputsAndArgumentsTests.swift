import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// What a person can get wrong on the command line, or what the shell hands over, and
/// what pkgtool must then do: the output paths it writes (links, devices, folders), a
/// standard output that refuses bytes, arguments that are not UTF-8, a save into a folder
/// that is not a package.
@Suite("command-line outputs and arguments")
struct OutputsAndArgumentsTests {
    /// Runs the built pkgtool through `sh -c`, so that the test can redirect or close
    /// descriptors and pass raw bytes: `script` refers to pkgtool as "$0".
    private func shell(_ script: String, in directory: String) throws -> (status: Int32, output: String, error: String) {
        try runProgram("/bin/sh", ["-c", script, pkgtoolExecutable()], workingDirectory: directory)
    }

    @Test("output that cannot be written is exit 2 with one line, never a success")
    func unwritableStandardOutput() throws {
        let directory = try TemporaryDirectory("stdout")
        try Files.write(directory.url("file"), "content")
        for redirect in [">&-", ">/dev/full"] {
            for command in ["--version", "hash file", "ls ."] {
                let run = try shell("\"$0\" \(command) \(redirect)", in: directory.path)
                #expect(run.status == 2, "\(command) \(redirect)")
                let lines = run.error.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].hasPrefix("pkgtool: cannot write standard output: "), "\(run.error)")
            }
        }
        // Written normally: exit 0, nothing on stderr.
        let fine = try shell("\"$0\" hash file >/dev/null", in: directory.path)
        #expect(fine.status == 0 && fine.error.isEmpty)
    }

    @Test("an argument that is not UTF-8 is refused, never repaired into another file's name")
    func nonUTF8Argument() throws {
        let directory = try TemporaryDirectory("utf8")
        // The name the repaired argument would have become holds other bytes.
        try Files.write(directory.url("f\u{FFFD}"), "another file")
        let run = try shell("printf AAA > \"$(printf 'f\\377')\"; \"$0\" hash \"$(printf 'f\\377')\"", in: directory.path)
        #expect(run.status == 2)
        #expect(run.output.isEmpty)
        #expect(run.error == "pkgtool: argument 'f\\377' is not valid UTF-8: pkgtool takes paths and names in UTF-8 only (rename it, or reach it through a link with a UTF-8 name)\n")
        #expect(TextEscaping.escapingInvalidUTF8([0x63, 0x61, 0x66, 0xE9, 0xC3, 0xA9]) == "caf\\351é")
    }

    @Test("pack writes through a link at OUT.zip and refuses a device, a FIFO or a folder before any work")
    func packOutputs() throws {
        let directory = try TemporaryDirectory("pack-out")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        try Files.write(source + "/a.txt", "hello")
        try Files.write(directory.url("real.zip"), "old")
        try Files.symlink(directory.url("link.zip"), to: "real.zip")
        #expect(pkgtool("pack", source, directory.url("link.zip")).status == .success)
        #expect(try FileSystem.status(directory.url("link.zip")).kind == .symbolicLink)
        #expect(pkgtool("verify", directory.url("real.zip")).status == .success)

        #expect(mkfifo(directory.url("fifo"), 0o644) == 0)
        let fifo = pkgtool("pack", source, directory.url("fifo"))
        #expect(fifo.status == .trouble)
        #expect(fifo.errors == ["cannot replace '\(directory.url("fifo"))': it is a FIFO, not a regular file that can be replaced"])
        #expect(try FileSystem.status(directory.url("fifo")).kind == .fifo)

        let folder = pkgtool("pack", source, source)
        #expect(folder.status == .trouble)
        #expect(folder.errors.first?.contains("it is a directory, not a regular file") == true)
        #expect(pkgtool("pack", source, directory.url("dir/")).status == .trouble)
        // Conflicting reuse options are a usage error.
        #expect(pkgtool("pack", "--base", directory.url("real.zip"), "--fresh", source, directory.url("x.zip")).status == .trouble)
        #expect(try FileSystem.statusIfExists(directory.url("x.zip")) == nil)
    }

    @Test("unpack follows a link at DEST and removes what a killed unpack into DEST left")
    func unpackDestination() throws {
        let directory = try TemporaryDirectory("unpack-dest")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        try Files.write(source + "/a.txt", "hello")
        let archive = directory.url("a.zip")
        #expect(pkgtool("pack", source, archive).status == .success)
        try Files.makeDirectory(directory.url("empty"))
        try Files.symlink(directory.url("link"), to: "empty")
        #expect(pkgtool("unpack", archive, directory.url("link")).status == .success)
        #expect(try FileSystem.status(directory.url("link")).kind == .symbolicLink)
        #expect(String(decoding: try Files.read(directory.url("empty/a.txt")), as: UTF8.self) == "hello")

        // A staging tree whose unpack was killed: no process holds its lock.
        let leftover = SiblingNames(forName: "out").newStaging()
        try Files.makeDirectory(directory.url(leftover))
        try Files.write(directory.url(leftover + "/half.bin"), "partial")
        #expect(pkgtool("unpack", archive, directory.url("out")).status == .success)
        #expect(try FileSystem.statusIfExists(directory.url(leftover)) == nil)
        let names = try DirectoryListing.names(in: try FileDescriptor.openDirectory(directory.path))
        #expect(!names.contains { $0.contains(".pkgtool-") })
    }

    @Test("paths through linked folders work; '.' as DEST is refused before any work; a linked package is the folder it names")
    func linkedFoldersAndDot() throws {
        let directory = try TemporaryDirectory("linked-folders")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        try Files.write(source + "/a.txt", "hello")
        try Files.makeDirectory(directory.url("real"))
        try Files.symlink(directory.url("linked"), to: "real")
        try Files.symlink(directory.url("srclink"), to: "src")
        // The folder holding OUT or DEST is a link (as /var/run is to /run).
        #expect(pkgtool("pack", directory.url("srclink"), directory.url("linked/a.zip")).status == .success)
        #expect(pkgtool("unpack", directory.url("real/a.zip"), directory.url("linked/dest")).status == .success)
        #expect(try FileSystem.status(directory.url("real/dest/a.txt")).size == 5)
        #expect(pkgtool("manifest", directory.url("srclink")).status == .success)
        #expect(pkgtool("verify", directory.url("srclink")).status == .success)

        for dest in [".", directory.url("real") + "/.", ""] {
            let refused = pkgtool("unpack", directory.url("real/a.zip"), dest)
            #expect(refused.status == .trouble)
            #expect(refused.errors.first?.contains("name the destination directory itself") == true, "\(refused.errors)")
        }
    }

    @Test("save refuses to empty a folder that is not a package unless --force")
    func saveIntoForeignFolder() throws {
        let directory = try TemporaryDirectory("foreign")
        let draft = directory.url("draft")
        let package = directory.url("notes.pkg")
        try Files.makeDirectory(draft)
        try Files.write(draft + "/chapter1.txt", "one")
        #expect(pkgtool("save", "--fsync", "none", draft, package).status == .success)
        try Files.write(draft + "/chapter2.txt", "two")

        // The arguments swapped: the draft would lose chapter2.txt.
        let swapped = pkgtool("save", "--fsync", "none", package, draft)
        #expect(swapped.status == .failure)
        #expect(swapped.errors.count == 1 && swapped.errors[0].contains("is not a package (no manifest of its own in .pkgtool)"))
        #expect(String(decoding: try Files.read(draft + "/chapter2.txt"), as: UTF8.self) == "two")

        // An empty folder, or a package, is saved into as usual; --force replaces a folder.
        try Files.makeDirectory(directory.url("empty"))
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("empty")).status == .success)
        #expect(pkgtool("save", "--fsync", "none", draft, package).status == .success)
        #expect(pkgtool("save", "--fsync", "none", "--force", package, draft).status == .success)
        #expect(try FileSystem.statusIfExists(draft + "/chapter2.txt") != nil)
        #expect(pkgtool("save", "--stats", "--json", draft, package).status == .trouble)

        // Named through a link, or holding a stray file called .pkgtool, a folder is still
        // no package.
        let work = directory.url("work")
        try Files.makeDirectory(work)
        try Files.write(work + "/mine.txt", "mine")
        try Files.symlink(directory.url("work-link"), to: "work")
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("work-link")).status == .failure)
        try Files.write(work + "/.pkgtool", "")
        #expect(pkgtool("save", "--fsync", "none", draft, work).status == .failure)
        #expect(try Files.read(work + "/mine.txt") == Array("mine".utf8))

        // A .pkgtool makes a folder a package only when it holds a manifest that names that
        // folder, or describes exactly what it holds (a copy of a whole package): an empty
        // one does not, nor a package's manifest copied in among a person's files.
        try FileManager.default.removeItem(atPath: work + "/.pkgtool")
        try Files.makeDirectory(work + "/.pkgtool")
        #expect(pkgtool("save", "--fsync", "none", draft, work).status == .failure)
        try FileManager.default.removeItem(atPath: work + "/.pkgtool")
        try FileManager.default.copyItem(atPath: package + "/.pkgtool", toPath: work + "/.pkgtool")
        let copied = pkgtool("save", "--fsync", "none", draft, work)
        #expect(copied.status == .failure && copied.errors.first?.contains("is not a package") == true)
        #expect(try Files.read(work + "/mine.txt") == Array("mine".utf8))
        // A copy of a whole package keeps working; once saved, its manifest names it.
        try FileManager.default.copyItem(atPath: package, toPath: directory.url("copy.pkg"))
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("copy.pkg")).status == .success)
        try Files.write(draft + "/chapter3.txt", "three")
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("copy.pkg")).status == .success)
        // A copy edited behind pkgtool's back before its first save describes nothing it
        // holds: it asks for --force once.
        try FileManager.default.copyItem(atPath: package, toPath: directory.url("edited.pkg"))
        try Files.write(directory.url("edited.pkg") + "/mine.txt", "an edit")
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("edited.pkg")).status == .failure)
        #expect(pkgtool("save", "--fsync", "none", "--force", draft, directory.url("edited.pkg")).status == .success)
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("edited.pkg")).status == .success)
        // A folder holding nothing but an empty .pkgtool has nothing to lose: saved into.
        try Files.makeDirectory(directory.url("bare/.pkgtool"))
        #expect(pkgtool("save", "--fsync", "none", draft, directory.url("bare")).status == .success)
    }

    @Test("hash - reads standard input, as xxhsum does")
    func hashStandardInput() throws {
        let bytes = Array("abc".utf8)
        let run = try runProgram(pkgtoolExecutable(), ["hash", "-"], input: bytes)
        #expect(run.status == 0)
        #expect(run.output == "\(ContentHash.of(bytes))  stdin\n")
        let xxhsum = try runProgram("/usr/bin/xxhsum", ["-H2", "-"], input: bytes)
        #expect(run.output == xxhsum.output)
        // With standard input closed there is nothing to hash: an error, not the empty hash.
        let directory = try TemporaryDirectory("hash-stdin")
        let closed = try shell("\"$0\" hash - <&-", in: directory.path)
        #expect(closed.status == 2 && closed.output.isEmpty && closed.error.contains("standard input"))
    }

    @Test("pull says what is wrong with DEST before it reaches for the network; diff needs two sides for a remote")
    func remoteArgumentsCheckedLocally() throws {
        let home = try TemporaryDirectory("pull-dest")
        try Files.write(home.url("file"), "not a folder")
        let environment = [
            "PATH": "/usr/bin:/bin", "HOME": home.path, "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "secret",
            "AWS_REGION": "us-east-1", "PKGTOOL_CACHE_DIR": home.url("cache"),
        ]
        let remote = ["pull", "--retries", "0", "--endpoint", "http://127.0.0.1:1", "s3://bucket/prefix"]
        let onFile = try runProgram(pkgtoolExecutable(), remote + [home.url("file")], environment: environment)
        #expect(onFile.status == 1)
        #expect(!onFile.error.contains("S3 endpoint") && onFile.error.split(separator: "\n").count == 1, "\(onFile.error)")
        let noFolder = try runProgram(pkgtoolExecutable(), remote + [home.url("missing/dest")], environment: environment)
        #expect(noFolder.status == 2)
        #expect(noFolder.error.contains("No such file or directory"), "\(noFolder.error)")

        let single = pkgtool("diff", "s3://bucket/prefix")
        #expect(single.status == .trouble)
        #expect(single.errors.first?.hasPrefix("a remote is compared with a second side") == true)
    }

    @Test("Ctrl-C stops a save, a pack or an unpack cleanly: exit 130, nothing left beside the target, the old version intact")
    func interruptedSavePackAndUnpack() throws {
        let directory = try TemporaryDirectory("interrupt")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        for index in 0..<24 { try Files.writeRandom(source + "/f\(index).bin", size: 8 << 20, seed: UInt64(index)) }
        let package = directory.url("doc.pkg")
        try Files.makeDirectory(directory.url("first"))
        try Files.write(directory.url("first/old.txt"), "old")
        #expect(pkgtool("save", "--fsync", "none", directory.url("first"), package).status == .success)
        let oldHash = try PackageScan.scan(package).snapshot.rootHash
        for (strategy, delay) in [("atomic", 50_000), ("full", 150_000), ("journaled", 100_000)] {
            // Either it finished first, or the interrupt stopped it (killed by SIGINT, or
            // exit 130) and the old version stands.
            let interrupted = try Self.runInterrupted(
                ["save", "--strategy", strategy, "--fsync", "none", source, package], after: useconds_t(delay))
            if interrupted { #expect(try PackageScan.scan(package).snapshot.rootHash == oldHash, "\(strategy)") }
            #expect(pkgtool("verify", package).status == .success, "\(strategy)")
            let names = try DirectoryListing.names(in: try FileDescriptor.openDirectory(directory.path))
            #expect(!names.contains { $0.contains(".pkgtool-") }, "\(strategy): \(names)")
            #expect(try Trees.names(package + "/.pkgtool").allSatisfy { $0 != "journal" }, "\(strategy)")
            if !interrupted {
                // Finished: back to the old version for the next round.
                #expect(pkgtool("save", "--fsync", "none", "--strategy", strategy, directory.url("first"), package).status == .success)
            }
        }
        let archive = directory.url("out.zip")
        if try Self.runInterrupted(["pack", "--level", "9", source, archive], after: 100_000) {
            #expect(try FileSystem.statusIfExists(archive) == nil)
        } else {
            #expect(pkgtool("verify", archive).status == .success)
        }
        var names = try DirectoryListing.names(in: try FileDescriptor.openDirectory(directory.path))
        #expect(!names.contains { $0.contains(".pkgtool-") }, "\(names)")

        // An unpack stopped part-way leaves no DEST and no staging tree. Text, so that the
        // entries are deflated and inflating them takes a while.
        let text = directory.url("text")
        try Files.makeDirectory(text)
        for index in 0..<8 {
            var generator = SeededBytes(seed: UInt64(100 + index))
            let letters = generator.bytes(8 << 20).map { UInt8(ascii: "a") + $0 % 16 }
            try Files.write(text + "/page\(index).txt", letters)
        }
        let packed = directory.url("packed.zip")
        #expect(pkgtool("pack", "--level", "1", text, packed).status == .success)
        let destination = directory.url("unpacked")
        if try Self.runInterrupted(["unpack", "--jobs", "1", packed, destination], after: 60_000) {
            #expect(try FileSystem.statusIfExists(destination) == nil)
        } else {
            #expect(try PackageScan.scan(destination).snapshot.rootHash == (try PackageScan.scan(text).snapshot.rootHash))
        }
        names = try DirectoryListing.names(in: try FileDescriptor.openDirectory(directory.path))
        #expect(!names.contains { $0.contains(".pkgtool-") }, "\(names)")
    }

    /// Runs pkgtool with `arguments`, interrupts it (SIGINT) after `microseconds` and waits.
    /// True when the interrupt stopped it; false when it had finished with exit 0 first.
    private static func runInterrupted(_ arguments: [String], after microseconds: useconds_t) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pkgtoolExecutable())
        process.arguments = arguments
        try process.run()
        usleep(microseconds)
        process.interrupt()
        process.waitUntilExit()
        if stoppedByInterrupt(process) { return true }
        #expect(process.terminationStatus == 0 && process.terminationReason == .exit, "\(arguments)")
        return false
    }

    private static func stoppedByInterrupt(_ process: Process) -> Bool {
        (process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGINT)
            || (process.terminationReason == .exit && process.terminationStatus == 128 + SIGINT)
    }

    @Test("help answers for itself")
    func helpOfHelp() {
        for arguments in [["help", "--help"], ["help", "-h"], ["help", "help"]] {
            let run = pkgtool(arguments)
            #expect(run.status == .success && run.output.contains("usage: pkgtool"))
        }
    }
}
