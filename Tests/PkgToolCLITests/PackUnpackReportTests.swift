import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

@Suite("pack and unpack report what they wrote (--stats, --json)")
struct PackUnpackReportTests {
    @Test func reports() throws {
        let directory = try TemporaryDirectory("pack-report")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/pages/empty")
        try Files.write(source + "/pages/1.txt", String(repeating: "compressible ", count: 200))
        try Files.writeRandom(source + "/noise.bin", size: 10_000, seed: 3)
        try Files.symlink(source + "/latest", to: "pages/1.txt")
        let archive = directory.url("out.zip")

        let packed = pkgtool("pack", "--json", source, archive)
        #expect(packed.status == .success)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(packed.output.utf8)) as? [String: Any])
        #expect(report["entries"] as? Int == 5)
        #expect(report["files"] as? Int == 2 && report["directories"] as? Int == 2 && report["links"] as? Int == 1)
        #expect(report["reused"] as? Int == 0)
        #expect(report["archive_bytes"] as? Int == Int(try FileSystem.status(archive).size))
        #expect(report["base_ignored"] is NSNull)

        // A repack of the same tree reuses every file (links and directories are rewritten).
        let repacked = pkgtool("pack", "--stats", source, archive)
        #expect(repacked.status == .success)
        #expect(repacked.output.contains("reused          2 entries"))
        #expect(repacked.output.hasPrefix("entries         5 (2 files, 2 directories, 1 link)\n"))
        #expect(pkgtool("pack", "--stats", "--json", source, archive).status == .trouble)

        let unpacked = pkgtool("unpack", "--json", archive, directory.url("dest"))
        #expect(unpacked.status == .success)
        let extract = try #require(try JSONSerialization.jsonObject(with: Data(unpacked.output.utf8)) as? [String: Any])
        #expect(extract["files"] as? Int == 2 && extract["links"] as? Int == 1)
        #expect(extract["bytes"] as? Int == 2600 + 10_000)
        // A dry run checks the archive and DEST, lists what would be written, writes nothing.
        let dry = pkgtool("unpack", "--dry-run", archive, directory.url("dry"))
        #expect(dry.status == .success)
        #expect(dry.output.split(separator: "\n").count == 5 && dry.output.split(separator: "\n").allSatisfy { $0.hasPrefix("A\t") })
        #expect(try FileSystem.statusIfExists(directory.url("dry")) == nil)
        #expect(pkgtool("unpack", "-n", archive, directory.url("dest")).status == .trouble)
        let text = pkgtool("unpack", "--stats", archive, directory.url("dest2"))
        #expect(text.output.hasPrefix("files           2, 12.3 KiB (12600 bytes)\n"))
        #expect(pkgtool("diff", source, directory.url("dest2")).status == .success)
    }
}
