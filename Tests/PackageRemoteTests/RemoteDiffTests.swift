import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// `pkgtool diff PKG s3://…`, `diff s3://… PKG` and `diff s3://… s3://…` compare the
/// remote's manifest as it is decoded with the tree held (`StreamedComparison`): what they
/// print, in every format and either order, is what `diff` prints for a local copy of the
/// version (a pull of it), whose two trees it holds whole.
@Suite("Remote diff") struct RemoteDiffTests {
    static let formats: [[String]] = [[], ["--json"], ["--stat"], ["-z"], ["--no-renames"], ["--json", "--no-renames"]]

    /// Every format, both argument orders: the remote as the pulled copy `copy`.
    func expectSameAsLocal(
        _ device: PkgtoolProcess, package: String, remote: String, copy: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        for format in Self.formats {
            for (streamed, local) in [([package, remote], [package, copy]), ([remote, package], [copy, package])] {
                let got = try device.run(["diff"] + format + streamed)
                let want = try device.run(["diff"] + format + local)
                #expect(got.status == want.status, "\(format) \(streamed): \(got.errors)", sourceLocation: sourceLocation)
                #expect(got.output == want.output, "\(format) \(streamed)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func equalChangedAddedRemovedKindsAndRenamesPrintWhatALocalCopyPrints() throws {
        let fixture = try RemoteFixture("rdiff")
        let package = try fixture.makePackage("package", pages: 12, mediaSize: 1 << 16)
        try Files.makeDirectory(package + "/tree/deep/deeper")
        try Files.write(package + "/tree/deep/deeper/leaf.txt", "a leaf\n")
        try Files.write(package + "/tree/deep/other.txt", "other\n")
        try Files.write(package + "/becomes-folder", "a file\n")
        let remote = fixture.location.description
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        #expect(try device.run("push", package, remote).status == 0)
        let copy = fixture.path("copy")
        let pulled = try PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b")).run("pull", remote, copy)
        #expect(pulled.status == 0, "\(pulled.errors)")

        for order in [[package, remote], [remote, package]] {
            let same = try device.run(["diff"] + order)
            #expect(same.status == 0 && same.output.isEmpty, "\(order): \(same.errors)")
        }
        try expectSameAsLocal(device, package: package, remote: remote, copy: copy)

        // Content, mode and target changes; files and folders added and removed; kinds
        // changed both ways; a whole folder and a single file moved.
        try Files.write(package + "/pages/a/page2.json", "{\"edited\": true}")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: package + "/metadata.json")
        try FileManager.default.removeItem(atPath: package + "/link")
        try Files.symlink(package + "/link", to: "pages/b/page1.json")
        try FileManager.default.removeItem(atPath: package + "/pages/b/page3.json")
        try Files.makeDirectory(package + "/added/inner")
        try Files.write(package + "/added/inner/new.txt", "new\n")
        try FileManager.default.removeItem(atPath: package + "/empty")
        try FileManager.default.removeItem(atPath: package + "/becomes-folder")
        try Files.makeDirectory(package + "/becomes-folder/sub")
        try Files.write(package + "/becomes-folder/sub/x.txt", "x\n")
        try FileManager.default.removeItem(atPath: package + "/media")
        try Files.write(package + "/media", "media is a file now\n")
        try FileManager.default.moveItem(atPath: package + "/tree/deep", toPath: package + "/moved-deep")
        try FileManager.default.moveItem(atPath: package + "/pages/a/page4.json", toPath: package + "/page4-moved.json")

        let plain = try device.run("diff", remote, package)
        #expect(plain.status == 1, "\(plain.errors)")
        let lines = plain.output.split(separator: "\n").map(String.init)
        for line in [
            "A\tadded", "T\tbecomes-folder", "D\tempty", "M\tlink", "T\tmedia", "M\tmetadata.json",
            "R\ttree/deep\tmoved-deep", "R\tpages/a/page4.json\tpage4-moved.json", "M\tpages/a/page2.json",
        ] {
            #expect(lines.contains { $0 == line } == true, "missing \(line) in \(lines)")
        }
        try expectSameAsLocal(device, package: package, remote: remote, copy: copy)
    }

    @Test func twinNamesAreTwoEntriesAsBytes() throws {
        let fixture = try RemoteFixture("rdiff-twins")
        let package = fixture.path("twins")
        try Files.makeDirectory(package + "/e\u{301}")
        try Files.write(package + "/e\u{301}/inner.txt", "decomposed folder\n")
        try Files.write(package + "/\u{e9}", "precomposed file\n")
        try Files.write(package + "/caf\u{e9}.txt", "nfc\n")
        try Files.write(package + "/cafe\u{301}.txt", "nfd\n")
        let remote = fixture.location.description
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let pushed = try device.run("push", package, remote)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let copy = fixture.path("copy")
        #expect(try PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b")).run("pull", remote, copy).status == 0)
        #expect(try device.run("diff", package, remote).status == 0)

        // Only the decomposed twin changes; the precomposed one stays equal.
        try Files.write(package + "/cafe\u{301}.txt", "nfd, edited\n")
        try Files.write(package + "/e\u{301}/inner.txt", "decomposed folder, edited\n")
        let changed = try device.run("diff", "-z", package, remote)
        #expect(changed.status == 1)
        #expect(Array(changed.output.utf8) == Array("M\0cafe\u{301}.txt\0M\0e\u{301}/inner.txt\0".utf8))
        try expectSameAsLocal(device, package: package, remote: remote, copy: copy)
    }

    @Test func twoRemotesCompareAsTheirCopies() throws {
        let fixture = try RemoteFixture("rdiff-two")
        let package = try fixture.makePackage("package", pages: 6, mediaSize: 1 << 12)
        let first = fixture.location.description
        let second = RemoteLocation(bucket: fixture.bucket, prefix: "second").description
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        #expect(try device.run("push", package, first).status == 0)
        try Files.write(package + "/pages/b/page1.json", "{}")
        try FileManager.default.removeItem(atPath: package + "/run.sh")
        #expect(try device.run("push", package, second).status == 0)
        let other = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        #expect(try other.run("pull", first, fixture.path("first")).status == 0)
        #expect(try other.run("pull", second, fixture.path("second")).status == 0)
        for format in Self.formats {
            let got = try device.run(["diff"] + format + [first, second])
            let want = try device.run(["diff"] + format + [fixture.path("first"), fixture.path("second")])
            #expect(got.status == want.status && got.status == 1, "\(format): \(got.errors)")
            #expect(got.output == want.output, "\(format)")
        }
        #expect(try device.run("diff", second, second).status == 0)
    }

    /// A version whose entries are out of order, or do not hash to the root it states, is
    /// refused by the diff in either order with the decoder's message, before anything is
    /// printed.
    @Test func aDamagedVersionIsRefusedBeforeAnythingIsPrinted() throws {
        let fixture = try RemoteFixture("rdiff-damaged")
        let package = try fixture.makePackage("package", pages: 4, mediaSize: 1 << 12)
        let first = try PackageRemote.push(package, to: fixture.location, options: fixture.options())
        try Files.write(package + "/pages/a/page0.json", "{\"edited\": 1}")
        func entry(_ path: String, _ kind: FileKind, _ text: String = "") -> RemoteEntry {
            RemoteEntry(
                path: path, kind: kind, permissions: kind == .directory ? 0o755 : 0o644, size: Int64(text.utf8.count),
                modificationTime: 1, contentHash: kind == .regular ? ContentHash.of(Array(text.utf8)) : ContentHash(high: 0, low: 0),
                linkTarget: nil, blobs: [])
        }
        var disordered = VersionManifest(
            sequence: 2, time: 1, parent: first.version.id, rootHash: ContentHash(high: 0, low: 0),
            entries: [entry("pages", .directory), entry("b.txt", .regular), entry("a.txt", .regular)])
        disordered.rootHash = disordered.snapshot().rootHash  // what the sorted entries hash to
        var misrooted = VersionManifest(
            sequence: 2, time: 1, parent: first.version.id, rootHash: ContentHash(high: 0, low: 0),
            entries: [entry("a.txt", .regular), entry("pages", .directory)])
        misrooted.rootHash = ContentHash(high: 1, low: 2)
        for manifest in [disordered, misrooted] {
            let bytes = manifest.encoded()
            let refusal = try #require(throws: RemoteError.self) { try VersionManifest.decode(bytes, id: SHA256Digest.of(bytes)) }
            try fixture.publish(manifest, history: [first.version])
            let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-\(bytes.count)"))
            for arguments in [[package, fixture.location.description], [fixture.location.description, package]] {
                for format in Self.formats {
                    let refused = try device.run(["diff"] + format + arguments)
                    #expect(refused.status == 2, "\(arguments)")
                    if format.contains("--json") {
                        // The refusal as JSON, and no change.
                        #expect(refused.output.contains("\"message\": \"\(refusal.message)\""), "\(refused.output)")
                        #expect(!refused.output.contains("\"status\""))
                    } else {
                        #expect(refused.output.isEmpty)
                        #expect(refused.errors == "pkgtool: \(refusal.message)\n", "\(arguments)")
                    }
                }
            }
        }
    }
}
