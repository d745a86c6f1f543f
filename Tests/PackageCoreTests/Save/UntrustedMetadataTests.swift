import Foundation
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// A package's `.pkgtool` is input, not trusted state (Specs/save.md, "What is trusted"): a
/// forged or copied journal is never applied by any command, and nothing outside the
/// package is ever touched.
@Suite("Untrusted package metadata", .serialized)
struct UntrustedMetadataTests {
    /// A package with a symbolic link pointing out of it, canaries beside it and further out,
    /// and the temporaries a journal would move.
    struct Scene {
        let home: TemporaryDirectory
        let outside: TemporaryDirectory
        let package: String

        init() throws {
            home = try TemporaryDirectory("untrusted")
            outside = try TemporaryDirectory("untrusted-outside")
            package = home.url("doc.pkg")
            try Files.makeDirectory(package + "/pages")
            try Files.write(package + "/pages/1.txt", "page one")
            try Files.write(package + "/metadata.json", "{}")
            try Files.symlink(package + "/out", to: outside.path)
            try Files.write(home.url("beside.txt"), "canary beside")
            try Files.write(outside.url("canary.txt"), "canary outside")
            try Files.write(outside.url("secret.txt"), "a file outside the package")
            try Files.makeDirectory(package + "/.pkgtool/tmp")
            try Files.write(package + "/.pkgtool/tmp/n1", "forged bytes")
        }

        /// Everything outside the package, by path and bytes.
        func canaries() throws -> [String: [UInt8]] {
            var seen: [String: [UInt8]] = [:]
            for directory in [home.path, outside.path] {
                for name in try Trees.names(directory) where name != "doc.pkg" {
                    let path = directory + "/" + name
                    if try FileSystem.status(path).kind == .regular { seen[path] = try Files.read(path) }
                    else { seen[path] = [] }
                }
            }
            return seen
        }

        /// The inodes a genuine journal of this package would be bound to.
        func binding() throws -> SaveJournal.Binding {
            SaveJournal.Binding(
                root: try FileSystem.status(package).inode,
                temporaryDirectory: try FileSystem.status(package + "/.pkgtool/tmp").inode)
        }

        func writeJournal(_ bytes: [UInt8]) throws {
            try Files.write(package + "/.pkgtool/journal", bytes)
        }
    }

    /// The forgeries of the issue: an absolute path, `../`, a file outside moved in, and a
    /// path through a link inside the package that points out.
    static let forgeries: [(label: String, operations: [SaveJournal.Operation])] = [
        ("an absolute path", [.rename(temporary: "n1", path: "/tmp/pkgtool-forged-absolute")]),
        ("a path through ..", [.rename(temporary: "n1", path: "../escaped.txt")]),
        ("a file outside moved in", [.rename(temporary: "../../../../outside/secret.txt", path: "pages/moved.txt")]),
        ("a link inside pointing out", [.rename(temporary: "n1", path: "out/canary.txt")]),
        ("a removal through the link", [.remove(path: "out/canary.txt", kind: .regular)]),
        ("pkgtool's own metadata", [.remove(path: ".pkgtool/tmp", kind: .directory)]),
    ]

    @Test("a forged journal, even bound to this package, is never applied: canaries untouched, the warning names the journal")
    func forgedJournalsAreRefused() throws {
        for (label, operations) in Self.forgeries {
            let scene = try Scene()
            let before = try scene.canaries()
            let contentBefore = try Trees.contentHash(scene.package)
            try scene.writeJournal(SaveJournal(binding: try scene.binding(), operations: operations).encoded())

            // A reading command: answers, warns, applies nothing.
            var warnings: [String] = []
            let hash = try PackageAccess.reading(scene.package, warn: { warnings.append($0) }) {
                try Trees.contentHash(scene.package)
            }
            #expect(hash == contentBefore, "\(label)")
            #expect(warnings.count == 1 && warnings.first?.contains("doc.pkg/.pkgtool/journal") == true, "\(label): \(warnings)")
            #expect(try scene.canaries() == before, "\(label)")
            #expect(try FileSystem.statusIfExists("/tmp/pkgtool-forged-absolute") == nil, "\(label)")
            #expect(try FileSystem.statusIfExists(scene.home.url("escaped.txt")) == nil, "\(label)")
            // Set aside, not left to be tried again.
            #expect(try FileSystem.statusIfExists(scene.package + "/.pkgtool/journal") == nil, "\(label)")
            #expect(try FileSystem.statusIfExists(scene.package + "/.pkgtool/set-aside/journal") != nil, "\(label)")
        }
    }

    @Test("a journal written for another directory (a copy of the package) is refused, as is an older format")
    func bindingAndVersion() throws {
        let scene = try Scene()
        let before = try scene.canaries()
        var binding = try scene.binding()
        binding.root &+= 1
        try scene.writeJournal(SaveJournal(binding: binding, operations: [.rename(temporary: "n1", path: "pages/2.txt")]).encoded())
        let report = try PackageRecovery.recover(packagePath: scene.package)
        #expect(!report.rolledForward)
        #expect(report.warnings.first?.contains("not written for this directory") == true, "\(report.warnings)")
        #expect(try FileSystem.statusIfExists(scene.package + "/pages/2.txt") == nil)
        // The package may now hold what its manifest does not say: the next save checks it.
        #expect(PackageRecovery.isMarkedForCheck(try PackageLocation(scene.package)))

        // A version-1 journal (the format an older pkgtool wrote, and the forged archive of
        // the issue used) carries no binding: refused.
        var old = ByteWriter()
        old.append(contentsOf: SaveJournal.magic)
        old.append(UInt32(1))
        old.append(UInt32(0))
        old.append(UInt64(1))
        old.append(UInt8(3))
        for text in ["n1", "pages/3.txt"] {
            old.append(UInt16(text.utf8.count))
            old.append(contentsOf: Array(text.utf8))
        }
        old.append(old.bytes.withUnsafeBytes { ContentHash.of($0) })
        try scene.writeJournal(old.bytes)
        let second = try PackageRecovery.recover(packagePath: scene.package)
        #expect(second.warnings.first?.contains("version 1") == true, "\(second.warnings)")
        #expect(try FileSystem.statusIfExists(scene.package + "/pages/3.txt") == nil)
        #expect(try scene.canaries() == before)
    }

    @Test("a save after a refused journal checks the package, then makes it its source")
    func saveAfterRefusal() throws {
        let scene = try Scene()
        let source = scene.home.url("src")
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/pages/1.txt", "page one, edited")
        try Files.write(source + "/metadata.json", "{}")
        _ = try PackageSaver.save(DirectorySource(source), to: scene.package, options: SaveOptions(durability: .none))
        try Files.makeDirectory(scene.package + "/.pkgtool/tmp")
        try Files.write(scene.package + "/.pkgtool/tmp/n1", "forged bytes")
        try scene.writeJournal(
            SaveJournal(binding: try scene.binding(), operations: [.rename(temporary: "n1", path: "../x")]).encoded())
        // Someone also changed a file behind pkgtool's back: only a check sees it.
        try Files.write(scene.package + "/metadata.json", "{\"tampered\": 1}")
        let outcome = try PackageSaver.save(DirectorySource(source), to: scene.package, options: SaveOptions(durability: .none))
        #expect(outcome.statistics.notes.contains { $0.contains("set aside the journal") })
        #expect(outcome.statistics.notes.contains { $0.contains("checked the package against its manifest") })
        #expect(try Trees.contentHash(scene.package) == (try Trees.contentHash(source)))
        #expect(!PackageRecovery.isMarkedForCheck(try PackageLocation(scene.package)))
    }

    @Test("validation: every path a normalised relative path of package content (or the manifest's own files)")
    func validation() {
        let refused: [SaveJournal.Operation] = [
            .remove(path: "", kind: .regular), .remove(path: "/etc/passwd", kind: .regular),
            .remove(path: "a/../b", kind: .regular), .remove(path: "a//b", kind: .regular), .remove(path: "./a", kind: .regular),
            .remove(path: "a/", kind: .regular), .remove(path: ".pkgtool", kind: .directory),
            .remove(path: ".pkgtool/journal", kind: .regular), .makeDirectory(path: ".pkgtool/x", permissions: 0o755),
            .makeDirectory(path: "a", permissions: 0o1_0000), .rename(temporary: "a/b", path: "x"),
            .rename(temporary: "..", path: "x"), .rename(temporary: "n1", path: ".pkgtool/tmp/n2"),
            .setPermissions(path: "a\u{0}b", permissions: 0o644),
        ]
        for operation in refused { #expect(SaveJournal.validate(operation) != nil, "\(operation)") }
        let accepted: [SaveJournal.Operation] = [
            .remove(path: "pages/1.txt", kind: .regular), .remove(path: ".pkgtool/delta.000003", kind: .regular),
            .makeDirectory(path: "pages/new", permissions: 0o700), .rename(temporary: "n12", path: "pages/é.txt"),
            .rename(temporary: "n2", path: ".pkgtool/index"), .rename(temporary: "n3", path: ".pkgtool/delta.000004"),
            .setPermissions(path: "run.sh", permissions: 0o755), .remove(path: "inner/.pkgtool", kind: .directory),
        ]
        for operation in accepted { #expect(SaveJournal.validate(operation) == nil, "\(operation)") }
    }

    @Test("pieces of .pkgtool of the wrong type are set aside; reading commands still answer; one save rebuilds")
    func wrongTypes() throws {
        let cases: [(label: String, damage: (String) throws -> Void)] = [
            ("index is a directory", { try FileSystem.remove($0 + "/.pkgtool/index"); try Files.makeDirectory($0 + "/.pkgtool/index") }),
            ("journal is a directory", { try Files.makeDirectory($0 + "/.pkgtool/journal/x") }),
            ("tmp is a file", { try FileSystem.removeTree($0 + "/.pkgtool/tmp"); try Files.write($0 + "/.pkgtool/tmp", "x") }),
            (".pkgtool is a file", { try FileSystem.removeTree($0 + "/.pkgtool"); try Files.write($0 + "/.pkgtool", "x") }),
            (".pkgtool is a link", { try FileSystem.removeTree($0 + "/.pkgtool"); try Files.symlink($0 + "/.pkgtool", to: "/tmp") }),
        ]
        for (label, damage) in cases {
            let home = try TemporaryDirectory("wrong-type")
            let source = home.url("src")
            try makeDocument(source, pages: 4, mediaSize: 4096)
            let package = home.url("doc.pkg")
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
            try damage(package)
            var warnings: [String] = []
            let hash = try PackageAccess.reading(package, warn: { warnings.append($0) }) { try Trees.contentHash(package) }
            #expect(hash == (try Trees.contentHash(source)), "\(label)")
            let outcome = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
            #expect(try Trees.contentHash(package) == (try Trees.contentHash(source)), "\(label)")
            let manifest = try #require(try PackageManifest.load(packagePath: package), "\(label)")
            #expect(manifest.snapshot.rootHash == (try Trees.contentHash(source)), "\(label)")
            // The next save trusts the rebuilt manifest again: nothing reread.
            let again = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
            #expect(again.statistics.unchanged && again.statistics.filesHashed == 0, "\(label): \(outcome.statistics.notes)")
            #expect(try FileSystem.statusIfExists("/tmp/index") == nil || label != ".pkgtool is a link")
        }
    }

    @Test(
        "a manifest copied from another package is not taken as this one's state",
        arguments: SaveStrategy.allCases.map { ($0, false) } + [(SaveStrategy.atomic, true)])
    func copiedManifestIsChecked(strategy: SaveStrategy, keepsPrevious: Bool) throws {
        let home = try TemporaryDirectory("copied-manifest")
        for (name, text) in [("x", "X"), ("y", "Y")] {
            try Files.makeDirectory(home.url(name))
            try Files.write(home.url(name + "/f"), text)
        }
        let options = SaveOptions(strategy: strategy, durability: .none, keepsPrevious: keepsPrevious)
        try PackageSaver.save(DirectorySource(home.url("x")), to: home.url("A"), options: options)
        try PackageSaver.save(DirectorySource(home.url("y")), to: home.url("B"), options: options)
        // B's metadata replaced by A's, which says B holds what x holds.
        try FileSystem.removeTree(home.url("B/.pkgtool"))
        let copied = try runProgram("/bin/cp", ["-a", home.url("A/.pkgtool"), home.url("B/.pkgtool")])
        try #require(copied.status == 0)

        let outcome = try PackageSaver.save(DirectorySource(home.url("x")), to: home.url("B"), options: options)
        #expect(!outcome.statistics.unchanged)
        #expect(outcome.statistics.notes.contains { $0.contains("written for another folder") })
        #expect(String(decoding: try Files.read(home.url("B/f")), as: UTF8.self) == "X")
        // The manifest now names B: the next save trusts it.
        let manifest = try #require(try PackageManifest.load(packagePath: home.url("B")))
        #expect(manifest.packageIdentity == (try FileSystem.status(home.url("B")).inode))
        let again = try PackageSaver.save(DirectorySource(home.url("x")), to: home.url("B"), options: options)
        #expect(again.statistics.unchanged && again.statistics.notes.isEmpty)
        // Saves that link unchanged files and append deltas keep naming the root they leave.
        for round in 0..<3 {
            try Files.write(home.url("x/g\(round)"), "round \(round)")
            try PackageSaver.save(DirectorySource(home.url("x")), to: home.url("B"), options: options)
            let recorded = try #require(try PackageManifest.load(packagePath: home.url("B")))
            #expect(recorded.packageIdentity == (try FileSystem.status(home.url("B")).inode), "\(strategy) round \(round)")
        }
    }
}
