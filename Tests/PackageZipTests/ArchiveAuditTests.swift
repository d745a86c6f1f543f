import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

/// Archives an outside audit brought (2026-12-05): ones common tools write that a strict
/// reader must still take, and ones that read two ways.
@Suite("archives from the outside: Windows names, bsdtar's padding, Unicode path fields, links out")
struct ArchiveAuditTests {
    /// The Info-ZIP Unicode path extra field (0x7075) naming `unicode` over a header name `stored`.
    private func unicodePathField(_ unicode: String, over stored: [UInt8]) -> [UInt8] {
        let data = [UInt8(1)] + le32(crc32Of(stored)) + Array(unicode.utf8)
        return le16(0x7075) + le16(UInt16(data.count)) + data
    }

    @Test("a Windows-made archive's backslashes are separators, as unzip and bsdtar read them")
    func windowsBackslashes() throws {
        let directory = try TemporaryDirectory("zip-windows")
        var folder = CraftedZip.Entry("sub\\", [UInt8]())
        folder.versionMadeBy = 0 << 8 | 20
        folder.externalAttributes = 0x10
        var file = CraftedZip.Entry("sub\\file.txt", "from Windows")
        file.versionMadeBy = 0 << 8 | 20
        file.externalAttributes = 0x20
        try CraftedZip([folder, file]).write(to: directory.url("win.zip"))
        #expect(pkgtool("verify", directory.url("win.zip")).status == .success)
        #expect(pkgtool("unpack", directory.url("win.zip"), directory.url("out")).status == .success)
        #expect(String(decoding: try Files.read(directory.url("out/sub/file.txt")), as: UTF8.self) == "from Windows")

        // A climb spelled with backslashes is refused, as it is on any host.
        var climbing = CraftedZip.Entry("..\\evil.txt", "x")
        climbing.versionMadeBy = 0 << 8 | 20
        try CraftedZip([climbing]).write(to: directory.url("climb.zip"))
        let refused = pkgtool("verify", directory.url("climb.zip"))
        #expect(refused.status == .failure && refused.errors.first?.contains("'..' component") == true)
    }

    @Test("bsdtar writing to a pipe pads with zeros: read, as unzip and python read it", Prerequisite.programs("bsdtar"))
    func bsdtarPadding() throws {
        _ = try Prerequisite.program("bsdtar")
        let directory = try TemporaryDirectory("zip-bsdtar-pipe")
        let source = directory.url("src")
        try makeSampleTree(source, bigSize: 20_000)
        let archive = directory.url("piped.zip")
        let made = try runProgram("/bin/sh", ["-c", "bsdtar --format zip -cf - -C '\(source)' . | cat > '\(archive)'"])
        try #require(made.status == 0, "\(made.error)")
        let bytes = try Files.read(archive)
        #expect(bytes.count % 10_240 == 0 && bytes.last == 0)
        #expect(pkgtool("verify", archive).status == .success)
        #expect(pkgtool("unpack", archive, directory.url("out")).status == .success)
        #expect(try treeDifferences(source, directory.url("out"), times: false) == [])

        // Zeros up to a block only: anything else after the end record is still junk.
        var crafted = CraftedZip([CraftedZip.Entry("a.txt", "a")])
        crafted.suffix = [UInt8](repeating: 0, count: 10_240)
        try crafted.write(to: directory.url("long-tail.zip"))
        #expect(pkgtool("verify", directory.url("long-tail.zip")).status == .failure)
        crafted.suffix = [0, 0, 1, 0]
        try crafted.write(to: directory.url("junk-tail.zip"))
        #expect(pkgtool("verify", directory.url("junk-tail.zip")).status == .failure)
    }

    @Test("a Unicode path field does not hide a stored name that climbs out, nor headers that store different names")
    func unicodePathFieldsCannotMask() throws {
        let directory = try TemporaryDirectory("zip-7075")
        let stored = Array("../../ESCAPE.txt".utf8)
        var masked = CraftedZip.Entry("../../ESCAPE.txt", "x")
        masked.localExtra = unicodePathField("ok.txt", over: stored)
        masked.centralExtra = masked.localExtra
        try CraftedZip([masked]).write(to: directory.url("masked.zip"))
        let refused = pkgtool("verify", directory.url("masked.zip"))
        #expect(refused.status == .failure)
        #expect(refused.errors.first?.contains("readers that ignore the field would use it") == true, "\(refused.errors)")

        var twoNames = CraftedZip.Entry("ok.txt", "x")
        twoNames.localName = Array("evil.txt".utf8)
        twoNames.localExtra = unicodePathField("same.txt", over: Array("evil.txt".utf8))
        twoNames.centralExtra = unicodePathField("same.txt", over: Array("ok.txt".utf8))
        try CraftedZip([twoNames]).write(to: directory.url("two-names.zip"))
        let differing = pkgtool("verify", directory.url("two-names.zip"))
        #expect(differing.status == .failure)
        #expect(differing.errors.first?.contains("store different names") == true, "\(differing.errors)")

        // An honest field (CP437 name, UTF-8 path) still reads.
        var honest = CraftedZip.Entry("caf\u{82}.txt", "x")
        honest.name = [0x63, 0x61, 0x66, 0x82, 0x2E, 0x74, 0x78, 0x74]
        honest.localExtra = unicodePathField("café.txt", over: honest.name)
        honest.centralExtra = honest.localExtra
        try CraftedZip([honest]).write(to: directory.url("honest.zip"))
        #expect(pkgtool("verify", directory.url("honest.zip")).status == .success)
    }

    @Test("'.pkgtool.' is reserved too: vfat and Windows drop trailing dots")
    func reservedWithTrailingDot() throws {
        let directory = try TemporaryDirectory("zip-reserved-dot")
        try CraftedZip([CraftedZip.Entry(".pkgtool./journal", "forged")]).write(to: directory.url("dot.zip"))
        let refused = pkgtool("verify", directory.url("dot.zip"))
        #expect(refused.status == .failure && refused.errors.first?.contains("pkgtool's own state") == true)
    }

    @Test("pack warns about links its own reader refuses, and names control characters as the CLI does")
    func packWarnsAboutLinksLeadingOut() throws {
        let directory = try TemporaryDirectory("zip-links-out")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/sub")
        try Files.write(source + "/a.txt", "a")
        try Files.symlink(source + "/abs", to: "/etc/passwd")
        try Files.symlink(source + "/sub/up", to: "../../outside")
        try Files.symlink(source + "/sub/fine", to: "../a.txt")
        let packed = pkgtool("pack", source, directory.url("out.zip"))
        #expect(packed.status == .success)
        #expect(packed.errors.count == 2, "\(packed.errors)")
        #expect(packed.errors.allSatisfy { $0.hasPrefix("warning: ") && $0.contains("pkgtool's unpack and verify refuse") })
        #expect(ZipError(.unsafeName, archive: "a.zip", entry: "evil\n\u{1B}[31m\u{9B}", "x").description
            == "refused 'a.zip': entry 'evil\\n\\033[31m\\302\\233': x")
    }
}
