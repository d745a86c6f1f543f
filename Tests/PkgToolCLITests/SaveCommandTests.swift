import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

@Suite("pkgtool save")
struct SaveCommandTests {
    func makeSource(_ root: String, variant: Int) throws {
        try Files.makeDirectory(root + "/pages")
        try Files.write(root + "/metadata.json", #"{"variant":\#(variant)}"#)
        for index in 0..<40 { try Files.write(root + "/pages/\(index).txt", "variant \(variant) page \(index)") }
        try Files.writeRandom(root + "/media.bin", size: (1 << 20) + variant, seed: UInt64(variant))
    }

    @Test func statsAndJSON() throws {
        let directory = try TemporaryDirectory("cli-save")
        try makeSource(directory.url("src"), variant: 1)
        let first = pkgtool("save", "--stats", "--fsync", "none", directory.url("src"), directory.url("doc.pkg"))
        #expect(first.status == .success)
        #expect(first.output.contains("written         42 files, 1.0 MiB ("))
        #expect(first.output.contains("source read     42 files, "))
        #expect(!first.output.contains("1 files"))
        try Files.write(directory.url("src/pages/3.txt"), "edited")
        let second = pkgtool(
            "save", "--json", "--strategy", "atomic", directory.url("src"), directory.url("doc.pkg"))
        #expect(second.status == .success)
        #expect(second.output.contains(#""files_written": 1"#))
        #expect(second.output.contains(#""files_linked": 41"#))
        #expect(second.output.contains(#""strategy": "atomic""#))
        #expect(pkgtool("diff", directory.url("src"), directory.url("doc.pkg")).status == .success)
        #expect(pkgtool("verify", directory.url("doc.pkg")).status == .success)
    }

    /// `save draft draft` (or a package inside its source) is refused for what it is, with
    /// no advice to pass --force, which would not lift it.
    @Test func aTreeSavedIntoItselfIsRefusedBeforeAnyForceAdvice() throws {
        let directory = try TemporaryDirectory("cli-save-nested")
        try makeSource(directory.url("draft"), variant: 1)
        for target in ["draft", "draft/inner.pkg"] {
            let refused = pkgtool("save", directory.url("draft"), directory.url(target))
            #expect(refused.status == .failure)
            #expect(refused.errors.count == 1)
            #expect(refused.errors.first?.contains("one lies inside the other") == true, "\(refused.errors)")
            #expect(refused.errors.first?.contains("--force") == false)
        }
    }

    /// `save --dry-run` lists what the save would change, as diff does, and writes nothing:
    /// not into an existing package, and no new one.
    @Test func aDryRunListsTheChangesAndWritesNothing() throws {
        let directory = try TemporaryDirectory("cli-save-dry")
        try makeSource(directory.url("src"), variant: 1)
        let fresh = pkgtool("save", "--dry-run", directory.url("src"), directory.url("new.pkg"))
        #expect(fresh.status == .success)
        #expect(fresh.output.contains("A\tmetadata.json\n") && fresh.output.contains("A\tpages/39.txt\n"))
        #expect(try FileSystem.statusIfExists(directory.url("new.pkg")) == nil)
        #expect(pkgtool("save", "--fsync", "none", directory.url("src"), directory.url("doc.pkg")).status == .success)
        let before = try Trees.contentHash(directory.url("doc.pkg"))
        let metadataBefore = try Trees.contentHash(directory.url("doc.pkg/.pkgtool"))
        try Files.write(directory.url("src/pages/3.txt"), "edited")
        try FileSystem.removeTree(directory.url("src/pages/4.txt"))
        let listed = pkgtool("save", "-n", directory.url("src"), directory.url("doc.pkg"))
        #expect(listed.status == .success)
        #expect(listed.output == "D\tpages/4.txt\nM\tpages/3.txt\n" || listed.output == "M\tpages/3.txt\nD\tpages/4.txt\n", "\(listed.output)")
        #expect(pkgtool("save", "-n", "--stats", directory.url("src"), directory.url("doc.pkg")).output.hasPrefix("2 changes"))
        #expect(try Trees.contentHash(directory.url("doc.pkg")) == before)
        #expect(try Trees.contentHash(directory.url("doc.pkg/.pkgtool")) == metadataBefore)
        // The refusals a save would meet come first.
        let nested = pkgtool("save", "-n", directory.url("src"), directory.url("src/inner"))
        #expect(nested.status == .failure)
    }

    /// Litter is left out by default (kept with --no-default-excludes); --exclude adds
    /// patterns; save and pack leave out the same.
    @Test func excludedEntriesStayOut() throws {
        let directory = try TemporaryDirectory("cli-save-exclude")
        try makeSource(directory.url("src"), variant: 1)
        try Files.write(directory.url("src/.DS_Store"), "finder")
        try Files.write(directory.url("src/pages/0.txt~"), "backup")
        try Files.makeDirectory(directory.url("src/cache"))
        try Files.write(directory.url("src/cache/thumb"), "t")
        let saved = pkgtool("save", "--fsync", "none", "--exclude", "cache/", directory.url("src"), directory.url("doc.pkg"))
        #expect(saved.status == .success)
        for left in [".DS_Store", "pages/0.txt~", "cache"] {
            #expect(try FileSystem.statusIfExists(directory.url("doc.pkg/" + left)) == nil, "\(left)")
        }
        #expect(pkgtool("pack", "--exclude", "cache/", directory.url("src"), directory.url("a.zip")).status == .success)
        #expect(pkgtool("diff", directory.url("a.zip"), directory.url("doc.pkg")).status == .success)
        let kept = pkgtool("save", "-n", "--no-default-excludes", directory.url("src"), directory.url("doc.pkg"))
        #expect(kept.output == "A\t.DS_Store\nA\tcache\nA\tcache/thumb\nA\tpages/0.txt~\n", "\(kept.output)")
    }

    @Test func badInput() throws {
        let directory = try TemporaryDirectory("cli-save-bad")
        try Files.write(directory.url("file"), "x")
        let missing = pkgtool("save", directory.url("nope"), directory.url("p"))
        #expect(missing.status == .trouble)
        #expect(missing.errors == ["cannot stat '\(directory.url("nope"))': No such file or directory (ENOENT from fstatat)"])
        let notDirectory = pkgtool("save", directory.url("file"), directory.url("p"))
        #expect(notDirectory.status == .failure)
        #expect(notDirectory.errors == ["cannot save from '\(directory.url("file"))': it is a regular file, not a directory"])
        let strategy = pkgtool("save", "--strategy", "fast", directory.url("file"), directory.url("p"))
        #expect(strategy.status == .trouble)
        #expect(strategy.errors.first == "--strategy expects one of full, atomic, journaled, not 'fast'")
    }

    @Test("two processes saving different snapshots to one package serialise; it always verifies",
          arguments: SaveStrategy.allCases)
    func concurrentProcesses(_ strategy: SaveStrategy) throws {
        let directory = try TemporaryDirectory("cli-race")
        try makeSource(directory.url("a"), variant: 1)
        try makeSource(directory.url("b"), variant: 2)
        let hashes = try [Trees.contentHash(directory.url("a")), Trees.contentHash(directory.url("b"))]
        let package = directory.url("doc.pkg")
        for round in 0..<8 {
            let order = round % 2 == 0 ? ["a", "b"] : ["b", "a"]
            let processes = try order.map { name -> Process in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: pkgtoolExecutable())
                process.arguments = ["save", "--strategy", strategy.rawValue, "--fsync", "none", directory.url(name), package]
                try process.run()
                return process
            }
            // Meanwhile, readers: one that takes pkgtool's shared lock always sees A or B;
            // one that knows nothing of pkgtool sees A or B or, when the tree it walks is
            // removed under it, an error, but never a mix (full and atomic).
            var reads = 0
            while processes.contains(where: \.isRunning) {
                let locked = try PackageAccess.reading(package) { try? Trees.contentHash(package) }
                if let locked { #expect(hashes.contains(locked), "round \(round): a locked reader saw a mix") }
                if strategy != .journaled, let unlocked = try? Trees.contentHash(package) {
                    #expect(hashes.contains(unlocked), "round \(round): a reader saw a mix")
                }
                reads += 1
            }
            for process in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
            }
            let hash = try Trees.contentHash(package)
            #expect(hashes.contains(hash), "round \(round)")
            #expect(pkgtool("verify", package).status == .success, "round \(round)")
        }
        #expect(try Trees.names(directory.path) == ["a", "b", "doc.pkg"])
    }

    @Test("--keep-previous: the replaced version stays beside the package and is updated next time; refused for journaled")
    func keepPrevious() throws {
        let directory = try TemporaryDirectory("cli-keep")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        try makeSource(source, variant: 1)
        let save = ["save", "--strategy", "atomic", "--keep-previous", "--fsync", "none", "--json", source, package]
        #expect(pkgtool(save).status == .success)
        let first = try Trees.contentHash(package)
        try Files.write(source + "/pages/3.txt", "edited")
        #expect(pkgtool(save).output.contains(#""reused_previous": false"#))
        #expect(try Trees.contentHash(directory.url(SiblingNames(forName: "doc.pkg").previous)) == first)
        try Files.write(source + "/pages/4.txt", "edited too")
        let third = pkgtool(save)
        #expect(third.status == .success)
        #expect(third.output.contains(#""reused_previous": true"#))
        #expect(third.output.contains(#""files_written": 1"#))
        #expect(pkgtool("diff", source, package).status == .success)
        #expect(pkgtool("verify", package).status == .success)
        #expect(try Trees.names(directory.path) == [SiblingNames(forName: "doc.pkg").previous, "doc.pkg", "src"])

        let refused = pkgtool("save", "--keep-previous", source, package)
        #expect(refused.status == .failure)
        #expect(
            refused.errors == ["cannot save '\(package)': keeping the previous version applies to the atomic strategy, not journaled"])

        // Two processes racing with the option: the package is always one of them and verifies.
        try makeSource(directory.url("b"), variant: 2)
        let hashes = try [Trees.contentHash(source), Trees.contentHash(directory.url("b"))]
        for round in 0..<4 {
            let processes = try [source, directory.url("b")].map { from -> Process in
                let process = Process()
                process.executableURL = URL(fileURLWithPath: pkgtoolExecutable())
                process.arguments = ["save", "--strategy", "atomic", "--keep-previous", "--fsync", "none", from, package]
                try process.run()
                return process
            }
            for process in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0)
            }
            #expect(hashes.contains(try Trees.contentHash(package)), "round \(round)")
            #expect(pkgtool("verify", package).status == .success, "round \(round)")
        }
    }
}
