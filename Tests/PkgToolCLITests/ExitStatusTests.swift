import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// A package and a ZIP archive of it, and the damaged variants the tests need.
private struct Inputs {
    let directory: TemporaryDirectory
    var package: String { directory.url("pkg") }
    var other: String { directory.url("other") }
    var archive: String { directory.url("pkg.zip") }
    var truncated: String { directory.url("truncated.zip") }
    var garbage: String { directory.url("garbage.zip") }
    var badCRC: String { directory.url("bad-crc.zip") }

    init() throws {
        directory = try TemporaryDirectory("exit-status")
        for root in [directory.url("pkg"), directory.url("other")] {
            try Files.makeDirectory(root + "/pages")
            try Files.write(root + "/pages/1.txt", String(repeating: "page one ", count: 50))
        }
        try Files.write(directory.url("other/pages/2.txt"), "two")
        #expect(pkgtool("pack", "--level", "0", package, archive).status == .success)
        let bytes = try Files.read(archive)
        try Files.write(truncated, Array(bytes.prefix(bytes.count / 2)))
        try Files.write(garbage, Array("this is not a zip archive\n".utf8))
        // A stored entry's data, altered: the structure opens, the CRC-32 does not match.
        var altered = bytes
        let data = try #require(indexOf(Array("page one page one".utf8), in: altered))
        altered[data] ^= 0x20
        try Files.write(badCRC, altered)
    }

    /// Flips one byte of the package's manifest at `offset` (from the end when negative).
    func damageManifest(at offset: Int, to value: UInt8? = nil) throws {
        let index = PackageLayout.metadataDirectory(of: package) + "/index"
        var bytes = try Files.read(index)
        let position = offset < 0 ? bytes.count + offset : offset
        bytes[position] = value ?? (bytes[position] ^ 0xFF)
        try Files.write(index, bytes)
    }
}

private func indexOf(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
}

@Suite("Exit statuses: 1 only for differences and failed verification, 2 when there is no answer")
struct ExitStatusTests {
    @Test("diff: 0 identical, 1 different, 2 when an input cannot be read (missing, corrupt archive, not an archive)")
    func diff() throws {
        let inputs = try Inputs()
        #expect(pkgtool("diff", inputs.package, inputs.archive).status == .success)
        #expect(pkgtool("diff", inputs.archive, inputs.package).status == .success)
        #expect(pkgtool("diff", inputs.package, inputs.other).status == .failure)
        #expect(pkgtool("diff", inputs.archive, inputs.other).status == .failure)
        for unreadable in [inputs.truncated, inputs.garbage, inputs.directory.url("missing")] {
            for arguments in [[unreadable, inputs.package], [inputs.package, unreadable]] {
                let result = pkgtool(["diff"] + arguments)
                #expect(result.status == .trouble, "diff \(arguments)")
                #expect(result.errors.count == 1)
                #expect(result.output.isEmpty)
            }
        }
        // The real program's status, for a corrupt archive.
        let process = try runProgram(pkgtoolExecutable(), ["diff", inputs.truncated, inputs.package])
        #expect(process.status == 2)
        #expect(process.error.hasPrefix("pkgtool: ") && process.error.split(separator: "\n").count == 1)
    }

    @Test("diff PKG: 2 without a manifest, with a damaged one, or with one of a newer format")
    func diffAgainstManifest() throws {
        let inputs = try Inputs()
        #expect(pkgtool("diff", inputs.package).status == .trouble)
        #expect(pkgtool("manifest", inputs.package).status == .success)
        #expect(pkgtool("diff", inputs.package).status == .success)
        try Files.write(inputs.package + "/new.txt", "new")
        #expect(pkgtool("diff", inputs.package).status == .failure)
        try inputs.damageManifest(at: -1)
        let damaged = pkgtool("diff", inputs.package)
        #expect(damaged.status == .trouble)
        #expect(damaged.errors.first?.contains("cannot be trusted") == true)
    }

    @Test("verify PKG: 1 when the package or its manifest is damaged, 2 when there is no verdict")
    func verifyPackage() throws {
        let inputs = try Inputs()
        let none = pkgtool("verify", inputs.package)
        #expect(none.status == .trouble)
        #expect(none.errors.first?.contains("has no manifest") == true)
        #expect(pkgtool("verify", inputs.directory.url("missing")).status == .trouble)
        #expect(pkgtool("manifest", inputs.package).status == .success)
        #expect(pkgtool("verify", inputs.package).status == .success)

        try Files.write(inputs.package + "/pages/1.txt", "edited behind pkgtool's back")
        #expect(pkgtool("verify", inputs.package).status == .failure)
        #expect(pkgtool("manifest", inputs.package).status == .success)

        try inputs.damageManifest(at: -1)
        let damaged = pkgtool("verify", inputs.package)
        #expect(damaged.status == .failure)
        #expect(damaged.errors.first?.contains("its checksum does not match") == true)
        let damagedJSON = pkgtool("verify", "--json", inputs.package)
        #expect(damagedJSON.status == .failure)
        let verdict = try #require(try JSONSerialization.jsonObject(with: Data(damagedJSON.output.utf8)) as? [String: Any])
        #expect(verdict["ok"] as? Bool == false)
        #expect((verdict["error"] as? String)?.contains("checksum") == true)

        #expect(pkgtool("manifest", inputs.package).status == .success)
        try inputs.damageManifest(at: 8, to: 99)  // the format version
        let future = pkgtool("verify", inputs.package)
        #expect(future.status == .trouble)
        #expect(future.errors.first?.contains("newer than this pkgtool reads") == true)
    }

    @Test("verify ZIP: 1 for a corrupt archive or a file that is not one (the verdict), 2 when it cannot be read")
    func verifyArchive() throws {
        let inputs = try Inputs()
        #expect(pkgtool("verify", inputs.archive).status == .success)
        for corrupt in [inputs.truncated, inputs.garbage, inputs.badCRC] {
            let result = pkgtool("verify", corrupt)
            #expect(result.status == .failure, "\(corrupt)")
            #expect(result.errors.count == 1)
            let json = pkgtool("verify", "--json", corrupt)
            #expect(json.status == .failure)
            let verdict = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            #expect(verdict["ok"] as? Bool == false)
            #expect(verdict["path"] as? String == corrupt)
        }
        let sound = pkgtool("verify", "--json", inputs.archive)
        let verdict = try #require(try JSONSerialization.jsonObject(with: Data(sound.output.utf8)) as? [String: Any])
        #expect(verdict["ok"] as? Bool == true)
        #expect(pkgtool("verify", inputs.directory.url("missing.zip")).status == .trouble)
    }

    @Test("ls and unpack: 1 for a refused archive, 2 for a missing one")
    func listAndUnpack() throws {
        let inputs = try Inputs()
        #expect(pkgtool("ls", inputs.truncated).status == .failure)
        #expect(pkgtool("unpack", inputs.garbage, inputs.directory.url("out")).status == .failure)
        #expect(pkgtool("unpack", inputs.directory.url("missing.zip"), inputs.directory.url("out")).status == .trouble)
        #expect(try FileSystem.statusIfExists(inputs.directory.url("out")) == nil)
    }

    @Test("every command documents its exit statuses, and help shows them")
    func documented() {
        for command in PkgTool.commands {
            let spec = command.spec
            #expect(!spec.exitStatuses.isEmpty, "\(spec.name)")
            #expect(spec.exitStatuses.contains { $0.status == .success }, "\(spec.name)")
            #expect(spec.helpText.contains("exit status:\n  0  "), "\(spec.name)")
        }
        #expect(DiffCommand.spec.refusedInputStatus == .trouble)
        #expect(VerifyCommand.spec.refusedInputStatus == .failure)
    }
}
