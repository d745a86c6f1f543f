import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

@Suite("Archives the other tools write, verified and extracted by pkgtool")
struct ReaderInteropTests {
    /// Packs `source` with a shell command run inside it, then checks pkgtool verifies the
    /// result and extracts it identical to the source.
    func roundTrip(
        _ label: String, tool: String, _ command: (String, String) -> String, times: Bool = true,
        tree: (String) throws -> Void = { try makeSampleTree($0) }
    ) throws {
        _ = try Prerequisite.program(tool)
        let directory = try TemporaryDirectory("zip-peer-\(label)")
        let source = directory.url("src")
        try tree(source)
        let archive = directory.url("\(label).zip")
        let made = try runProgram("/bin/sh", ["-c", command(source, archive)])
        try #require(made.status == 0, "\(label): \(made.error)")
        let verified = pkgtool("verify", archive)
        #expect(verified.status == .success, "\(label): \(verified.errors)")
        let extracted = directory.url("out")
        let unpacked = pkgtool("unpack", archive, extracted)
        #expect(unpacked.status == .success, "\(label): \(unpacked.errors)")
        #expect(try treeDifferences(source, extracted, times: times) == [], "\(label)")
    }

    @Test("Info-ZIP zip -ry, with links, modes and raw UTF-8 names without bit 11", Prerequisite.programs("zip"))
    func infoZip() throws {
        try roundTrip("zip", tool: "zip") { source, archive in "cd '\(source)' && zip -qry -6 '\(archive)' ." }
    }

    /// The sample tree without symbolic links (for writers that cannot store them).
    static let treeWithoutLinks: @Sendable (String) throws -> Void = { root in
        try makeSampleTree(root)
        try FileSystem.remove(root + "/link-to-meta")
        try FileSystem.remove(root + "/pages/up-link")
    }

    @Test("Info-ZIP zip streaming to a pipe (data descriptors)", Prerequisite.programs("zip"))
    func infoZipStreamed() throws {
        // zip cannot store links when writing to a pipe (-y needs a seekable output).
        try roundTrip("zip-pipe", tool: "zip", { source, archive in
            "cd '\(source)' && zip -qr - . | cat > '\(archive)'"
        }, tree: Self.treeWithoutLinks)
        // The streamed archive really has data descriptors.
        let directory = try TemporaryDirectory("zip-pipe-check")
        try Self.treeWithoutLinks(directory.url("src"))
        _ = try runProgram("/bin/sh", ["-c", "cd '\(directory.url("src"))' && zip -qr - . | cat > '\(directory.url("s.zip"))'"])
        let archive = try ZipArchive.open(directory.url("s.zip"))
        #expect(archive.entries.contains { $0.hasDataDescriptor })
    }

    @Test("7-Zip (zip format, links kept)", Prerequisite.programs("7z"))
    func sevenZip() throws {
        try roundTrip("7z", tool: "7z", { source, archive in
            "cd '\(source)' && 7z a -tzip -snl -bso0 -bsp0 '\(archive)' . >/dev/null"
        }, times: false)
    }

    @Test("bsdtar (zip format, tar-style ./ names)", Prerequisite.programs("bsdtar"))
    func bsdtar() throws {
        try roundTrip("bsdtar", tool: "bsdtar") { source, archive in "bsdtar -a -cf '\(archive)' -C '\(source)' ." }
    }

    @Test("python zipfile: stored, deflated, and forced ZIP64", Prerequisite.programs("python3"))
    func python() throws {
        // zipfile follows links, so this tree has none.
        let plainTree = Self.treeWithoutLinks
        for (label, options) in [
            ("py-stored", "zipfile.ZIP_STORED, allowZip64=True"), ("py-deflated", "zipfile.ZIP_DEFLATED"),
            ("py-zip64", "zipfile.ZIP_DEFLATED, force64"),
        ] {
            let force = options.hasSuffix("force64")
            let compression = options.replacingOccurrences(of: ", force64", with: "")
            let script = """
                import os, sys, zipfile
                src, out = sys.argv[1], sys.argv[2]
                with zipfile.ZipFile(out, 'w', \(compression)) as z:
                    for root, dirs, files in os.walk(src):
                        for d in dirs:
                            z.write(os.path.join(root, d), os.path.relpath(os.path.join(root, d), src))
                        for f in files:
                            path = os.path.join(root, f)
                            info = zipfile.ZipInfo.from_file(path, os.path.relpath(path, src))
                            info.compress_type = z.compression
                            with open(path, 'rb') as src_file, z.open(info, 'w', force_zip64=\(force ? "True" : "False")) as dst:
                                dst.write(src_file.read())
                """
            let scriptPath = NSTemporaryDirectory() + "/pkgtool-\(label)-\(getpid()).py"
            try Files.write(scriptPath, script)
            defer { try? FileSystem.remove(scriptPath) }
            try roundTrip(label, tool: "python3", { source, archive in "python3 '\(scriptPath)' '\(source)' '\(archive)'" },
                times: false, tree: plainTree)
        }
    }
}
