import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Synchronization
import Testing

/// One identity for a package (issue "Real faults"): `.`, a relative path, a path through a
/// symlinked folder and the full path name one package — one lock, nothing of pkgtool's
/// inside it but `.pkgtool` — and links above a package are followed, links inside never.
@Suite("Package identity", .serialized)
struct PackageIdentityTests {
    func makeSource(_ path: String, variant: Int) throws {
        try Files.makeDirectory(path + "/pages")
        for page in 0..<40 { try Files.write(path + "/pages/\(page).txt", "page \(page), variant \(variant)") }
        try Files.writeRandom(path + "/media.bin", size: 256 << 10, seed: UInt64(variant))
    }

    @Test("save through '.', a relative path, a symlinked parent and the full path: 50 concurrent rounds, never a corrupted package, nothing of pkgtool's inside")
    func concurrentSavesThroughEveryName() throws {
        let home = try TemporaryDirectory("identity")
        let real = home.url("data")
        try Files.makeDirectory(real)
        try Files.symlink(home.url("link"), to: real)
        let package = real + "/doc.pkg"
        let sources = (0..<4).map { home.url("src\($0)") }
        for (index, source) in sources.enumerated() { try makeSource(source, variant: index) }
        let hashes = try Set(sources.map { try Trees.contentHash($0) })
        let binary = pkgtoolExecutable()
        let first = try runProgram(binary, ["save", "--fsync", "none", sources[0], package])
        #expect(first.status == 0, "\(first.error)")
        // (directory to run in, package as named there)
        let names: [(String, String)] = [(package, "."), (real, "doc.pkg"), (home.path, "link/doc.pkg"), ("/", package)]
        let strategies = ["journaled", "atomic", "full"]
        for round in 0..<50 {
            let strategy = strategies[round % strategies.count]
            let results = RunResults()
            let group = DispatchGroup()
            for (index, (directory, name)) in names.enumerated() {
                group.enter()
                Thread {
                    defer { group.leave() }
                    let run = try? runProgram(
                        binary, ["save", "--strategy", strategy, "--fsync", "none", sources[index], name],
                        workingDirectory: directory)
                    results.add(run?.status ?? -1, run?.error ?? "did not run")
                }.start()
            }
            group.wait()
            for (status, error) in results.all {
                // A save through '.' while another swaps the directory may find its working
                // directory gone: refused with a clear line, never a corrupted package.
                #expect(status == 0 || (status == 2 && error.hasPrefix("pkgtool: ")), "round \(round): \(error)")
            }
            let hash = try Trees.contentHash(package)
            #expect(hashes.contains(hash), "round \(round): the package is none of the sources")
            let verify = try runProgram(binary, ["verify", package])
            #expect(verify.status == 0, "round \(round): \(verify.output) \(verify.error)")
            #expect(try Trees.names(package).filter { $0.hasPrefix(".") } == [".pkgtool"], "round \(round)")
        }
        #expect(try Trees.names(real) == ["doc.pkg"], "nothing beside the package either")
    }

    @Test("a package under a symlinked parent saves with every strategy; a link inside the package is saved as a link")
    func symlinkedParent() throws {
        let home = try TemporaryDirectory("symlinked-parent")
        let real = home.url("real-home")
        try Files.makeDirectory(real + "/docs")
        try Files.symlink(home.url("home"), to: real)
        let source = home.url("src")
        try makeSource(source, variant: 1)
        try Files.symlink(source + "/outside", to: "/etc")
        for strategy in ["journaled", "atomic", "full"] {
            let package = home.url("home/docs/\(strategy).pkg")
            let run = try runProgram(pkgtoolExecutable(), ["save", "--strategy", strategy, "--fsync", "none", source, package])
            #expect(run.status == 0, "\(strategy): \(run.error)")
            #expect(try FileSystem.status(real + "/docs/\(strategy).pkg/outside").kind == .symbolicLink)
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)))
        }
    }

    @Test("'pkgtool save SRC .' from inside the package creates nothing inside it")
    func saveToDot() throws {
        let home = try TemporaryDirectory("dot")
        let source = home.url("src")
        try makeSource(source, variant: 1)
        let package = home.url("doc.pkg")
        try Files.makeDirectory(package)
        for strategy in ["journaled", "atomic", "full"] {
            try Files.write(source + "/pages/0.txt", "edited for \(strategy)")
            let run = try runProgram(
                pkgtoolExecutable(), ["save", "--strategy", strategy, "--fsync", "none", source, "."], workingDirectory: package)
            #expect(run.status == 0, "\(strategy): \(run.error)")
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), "\(strategy)")
            #expect(try Trees.names(package).filter { $0.hasPrefix(".") } == [".pkgtool"], "\(strategy)")
        }
        #expect(try Trees.names(home.path) == ["doc.pkg", "src"])
    }
}

/// Exit statuses and error text of programs run on several threads.
final class RunResults: Sendable {
    private let items = Mutex<[(Int32, String)]>([])
    func add(_ status: Int32, _ error: String) { items.withLock { $0.append((status, error)) } }
    var all: [(Int32, String)] { items.withLock { $0 } }
}
