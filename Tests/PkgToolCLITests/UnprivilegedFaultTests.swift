import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

/// Faults an unprivileged user meets (root ignores permissions, so these run `pkgtool` as
/// `nobody` through `setpriv` when the tests run as root, and are skipped otherwise):
/// read-only folders inside a package and a read-only package root never leave a package
/// that commands refuse, nor litter that no command removes.
@Suite("Faults as an unprivileged user", .serialized)
struct UnprivilegedFaultTests {
    static let nobody: UInt32 = 65534

    /// A scratch directory owned by `nobody`, and a copy of `pkgtool` it can run.
    struct Scene {
        let home: TemporaryDirectory
        let binary: String

        init?() throws {
            guard getuid() == 0, let setpriv = which("setpriv"), !setpriv.isEmpty else { return nil }
            home = try TemporaryDirectory("unprivileged")
            chmod(home.path, 0o755)
            binary = home.url("pkgtool")
            try Files.write(binary, try Files.read(pkgtoolExecutable()), permissions: 0o755)
            guard chown(home.path, UnprivilegedFaultTests.nobody, UnprivilegedFaultTests.nobody) == 0 else { return nil }
        }

        /// Runs pkgtool as `nobody`.
        func run(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
            try runProgram(
                which("setpriv")!, ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                workingDirectory: home.path)
        }

        /// Makes `path` (and everything below) belong to `nobody`.
        func giveAway(_ path: String) throws {
            _ = try runProgram(which("chown") ?? "/bin/chown", ["-R", "65534:65534", path])
        }
    }

    func makeSource(_ root: String, edit: String) throws {
        try Files.makeDirectory(root + "/ro/deep")
        try Files.write(root + "/ro/a.txt", "a \(edit)")
        try Files.write(root + "/ro/deep/b.txt", "b")
        try Files.write(root + "/metadata.json", "{\"edit\": \"\(edit)\"}")
    }

    @Test(
        "read-only folders in the source and the package: every strategy saves, changes inside them save, nothing is left behind",
        .enabled(if: Prerequisite.runs(Prerequisite.canRunAsNobody), "needs root and setpriv to run as nobody"))
    func readOnlyFolders() throws {
        let scene = try #require(try Scene(), "cannot run as nobody here")
        for strategy in ["journaled", "atomic", "full"] {
            let source = scene.home.url("src-\(strategy)")
            let package = scene.home.url("doc-\(strategy).pkg")
            try makeSource(source, edit: "one")
            try scene.giveAway(source)
            chmod(source + "/ro/deep", 0o555)
            chmod(source + "/ro", 0o555)
            let first = try scene.run(["save", "--strategy", strategy, "--fsync", "none", source, package])
            #expect(first.status == 0, "\(strategy): \(first.error)")
            // Change what sits inside the read-only folders.
            chmod(source + "/ro", 0o755)
            try Files.write(source + "/ro/a.txt", "a two, longer")
            try Files.write(source + "/ro/new.txt", "new")
            try scene.giveAway(source)
            chmod(source + "/ro", 0o555)
            let second = try scene.run(["save", "--strategy", strategy, "--fsync", "none", source, package])
            #expect(second.status == 0, "\(strategy): \(second.error)")
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), "\(strategy)")
            #expect(try FileSystem.status(package + "/ro").permissions == 0o555, "\(strategy)")
            let verify = try scene.run(["verify", package])
            #expect(verify.status == 0, "\(strategy): \(verify.output) \(verify.error)")
            let beside = try Trees.names(scene.home.path).filter { $0.contains("doc-\(strategy).pkg") && $0.hasPrefix(".") }
            #expect(beside.isEmpty, "\(strategy): \(beside)")
        }
    }

    @Test(
        "--keep-previous with a read-only package root: saves again and again, the kept tree is updated",
        .enabled(if: Prerequisite.runs(Prerequisite.canRunAsNobody), "needs root and setpriv to run as nobody"))
    func keepPreviousReadOnlyRoot() throws {
        let scene = try #require(try Scene(), "cannot run as nobody here")
        let source = scene.home.url("src")
        let package = scene.home.url("doc.pkg")
        try makeSource(source, edit: "one")
        try scene.giveAway(source)
        chmod(source, 0o555)
        for round in 1...3 {
            let run = try scene.run(["save", "--strategy", "atomic", "--keep-previous", "--fsync", "none", source, package])
            #expect(run.status == 0, "round \(round): \(run.error)")
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), "round \(round)")
            chmod(source, 0o755)
            try Files.write(source + "/metadata.json", "{\"round\": \(round)}")
            try scene.giveAway(source)
            chmod(source, 0o555)
        }
        #expect(try FileSystem.status(package).permissions == 0o555)
        let listing = try scene.run(["ls", package])
        #expect(listing.status == 0, "\(listing.error)")
    }
}
