import PackageCore
import PackageTestSupport
import Testing

@testable import PkgToolCLI

/// Names are bytes through every local command: a folder holding canonically-equivalent
/// twins (`é` precomposed and decomposed: one name to Swift's `String ==`, two files on
/// Linux) — as two files, two folders, and a folder beside a link — is saved, diffed,
/// verified, listed, packed and unpacked with every twin kept apart.
@Suite("Twin names through the CLI")
struct TwinNameTests {
    static let precomposed = "caf\u{e9}"
    static let decomposed = "cafe\u{301}"

    /// A source folder with twins of every pairing.
    func makeSource(_ root: String, edit: Int = 0) throws {
        try Files.makeDirectory(root + "/files")
        try Files.write(root + "/files/" + Self.precomposed, "precomposed \(edit)")
        try Files.write(root + "/files/" + Self.decomposed, "decomposed")
        try Files.makeDirectory(root + "/folders/" + Self.precomposed)
        try Files.makeDirectory(root + "/folders/" + Self.decomposed)
        try Files.write(root + "/folders/" + Self.precomposed + "/page", "in the precomposed folder")
        try Files.write(root + "/folders/" + Self.decomposed + "/page", "in the decomposed folder \(edit)")
        try Files.makeDirectory(root + "/mixed/" + Self.decomposed)
        try Files.write(root + "/mixed/" + Self.decomposed + "/page", "beside a link")
        if edit == 0 { try Files.symlink(root + "/mixed/" + Self.precomposed, to: "../files") }
    }

    /// Every twin's bytes as read back from `root`.
    func contents(_ root: String) throws -> [[UInt8]] {
        [
            try Files.read(root + "/files/" + Self.precomposed),
            try Files.read(root + "/files/" + Self.decomposed),
            try Files.read(root + "/folders/" + Self.precomposed + "/page"),
            try Files.read(root + "/folders/" + Self.decomposed + "/page"),
            try Files.read(root + "/mixed/" + Self.decomposed + "/page"),
            Array(try FileSystem.readSymbolicLink(root + "/mixed/" + Self.precomposed).utf8),
        ]
    }

    @Test(arguments: ["full", "atomic", "journaled"])
    func saveDiffVerifyAndListKeepTwinsApart(strategy: String) throws {
        let directory = try TemporaryDirectory("twins-cli")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        try makeSource(source)
        #expect(pkgtool("save", "--strategy", strategy, source, package).status == .success)
        #expect(try contents(package) == contents(source))
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        #expect(pkgtool("verify", package).status == .success)
        #expect(pkgtool("diff", source, package).output.isEmpty)

        // Edit one twin of each pair: only those change, and the save writes only them.
        try makeSource(source, edit: 1)
        let diff = pkgtool("diff", "-z", source, package)
        let changed = diff.output.split(separator: "\0").map { Array($0.utf8) }
        #expect(changed.contains(Array(("files/" + Self.precomposed).utf8)))
        #expect(changed.contains(Array(("folders/" + Self.decomposed + "/page").utf8)))
        #expect(!changed.contains(Array(("files/" + Self.decomposed).utf8)))
        #expect(!changed.contains(Array(("folders/" + Self.precomposed + "/page").utf8)))
        #expect(pkgtool("save", "--strategy", strategy, source, package).status == .success)
        #expect(try contents(package) == contents(source))
        #expect(pkgtool("verify", package).status == .success)
        #expect(pkgtool("diff", package).output.isEmpty, "the manifest describes every twin")

        // ls lists both twins of each pair, byte for byte.
        let listed = pkgtool("ls", "-z", package).output.split(separator: "\0").map { Array($0.utf8) }
        for folder in ["files", "folders", "mixed"] {
            for twin in [Self.precomposed, Self.decomposed] {
                // "kind size path" (a folder's path ends with "/"; a link's target follows as a field).
                let name = Array((" " + folder + "/" + twin).utf8)
                let listedAsItself = listed.contains { record in
                    let trimmed = record.last == UInt8(ascii: "/") ? Array(record.dropLast()) : record
                    return trimmed.count >= name.count && Array(trimmed.suffix(name.count)) == name
                }
                #expect(listedAsItself, "\(folder)/\(twin)")
            }
        }
    }

    @Test func packAndUnpackKeepTwinsApart() throws {
        let directory = try TemporaryDirectory("twins-zip")
        let source = directory.url("src")
        try makeSource(source)
        let archive = directory.url("doc.zip")
        #expect(pkgtool("pack", source, archive).status == .success)
        #expect(pkgtool("verify", archive).status == .success)
        let unpacked = directory.url("out")
        #expect(pkgtool("unpack", archive, unpacked).status == .success)
        #expect(try contents(unpacked) == contents(source))
        #expect(try Trees.contentHash(unpacked) == Trees.contentHash(source))
        #expect(pkgtool("diff", archive, source).output.isEmpty)
    }
}
