import Foundation
import PackageCore

/// ZIP against the peers, side by side in one run: `pack` vs `zip -r -6` (and with the
/// media suffixes stored, `-n`), archive sizes, 100,000 small files, `unpack` vs `unzip`,
/// `bsdtar -xf` and `7z x`, `verify` vs `7z t` and `unzip -t`, a repack after one changed
/// small file (with `--keep-previous`, and without: a first repack) vs `zip -u`, and peak
/// memory packing and unpacking a 4 GiB file.
///
/// Extractions go to fresh directories, removed only after all runs (creating files right
/// after deleting many is slow on this machine).
public struct ZipBenchmark {
    public var workDirectory: String
    public var pkgtool: String
    public var runs: Int
    public var smallFiles = 20_000
    public var mediaBytes: Int64 = 950 << 20
    public var manySmallFiles = 100_000
    public var hugeSize: Int64 = 4 << 30
    /// Storing the media suffixes, as an expert types it.
    public static let mediaSuffixes = ".mp4:.jpg:.bin"

    public init(workDirectory: String, pkgtool: String, runs: Int) {
        self.workDirectory = workDirectory
        self.pkgtool = pkgtool
        self.runs = runs
    }

    public typealias Result = SuiteResult

    public func run(log: (String) -> Void) throws -> Result {
        try FileSystem.makeDirectories(workDirectory)
        let work = try absolute(workDirectory)
        let document = work + "/zip-document"
        let smallTree = work + "/zip-small-files"
        let scratch = work + "/zip-scratch-\(getpid())"
        try FileSystem.makeDirectories(scratch)
        defer { try? FileSystem.removeTree(scratch) }
        if (try? FileSystem.status(document)) == nil {
            log("generating the document package (\(smallFiles) small files, \(Format.bytes(mediaBytes)) of media)")
            try FixtureWriter.documentPackage(document + ".tmp", smallFiles: smallFiles, mediaBytes: mediaBytes, seed: 11)
            try FileSystem.rename(document + ".tmp", to: document)
        }
        if (try? FileSystem.status(smallTree)) == nil {
            log("generating \(manySmallFiles) small files")
            try FixtureWriter.smallFileTree(smallTree + ".tmp", count: manySmallFiles, seed: 12)
            try FileSystem.rename(smallTree + ".tmp", to: smallTree)
        }
        guard let zip = Spawn.which("zip"), let unzip = Spawn.which("unzip") else {
            throw BenchError("the zip suite needs zip and unzip on PATH")
        }
        let sevenZip = Spawn.which("7z")
        let bsdtar = Spawn.which("bsdtar")
        var table = Table(["job", "median", "min", "max", "peak RSS", "cores busy"])
        var figures: [(String, JSONNumber)] = []
        var allSamples: [Sample] = []
        var counter = 0
        func fresh(_ label: String) -> String {
            counter += 1
            return "\(scratch)/\(label)-\(counter)"
        }
        func shell(_ command: String) throws -> ProcessCost { try Spawn.run("/bin/sh", ["-c", command]) }
        func add(_ samples: [Sample]) {
            allSamples += samples
            for sample in samples {
                table.add([
                    sample.name, Format.seconds(sample.median), Format.seconds(sample.minimum),
                    Format.seconds(sample.maximum), Format.bytes(sample.peakRSSBytes),
                    String(format: "%.2f", sample.parallelism),
                ])
            }
        }
        func verdict(_ label: String, _ value: Double, _ want: String, _ ok: Bool, figure: String) {
            figures.append((figure, .double(value)))
            table.add(["\(label) (want \(want))", Format.ratio(value) + (ok ? "" : "  not met"), "", "", "", ""])
        }

        // 1. Pack the document package.
        let ours = scratch + "/pkgtool.zip"
        let theirs = scratch + "/zip6.zip"
        let theirsStored = scratch + "/zip6n.zip"
        log("packing the document package: pkgtool, zip -r -6, zip -r -6 -n (\(runs) runs, interleaved)")
        let pack = try measureInterleaved(
            [
                ("pkgtool pack (document)", { try Spawn.run(self.pkgtool, ["pack", "--fresh", document, ours]) }),
                ("zip -r -6 (document)", { try shell("rm -f '\(theirs)' && cd '\(document)' && '\(zip)' -qr -6 '\(theirs)' .") }),
                (
                    "zip -r -6 -n \(Self.mediaSuffixes) (document)",
                    {
                        try shell(
                            "rm -f '\(theirsStored)' && cd '\(document)' && '\(zip)' -qr -6 -n \(Self.mediaSuffixes) '\(theirsStored)' .")
                    }
                ),
            ], runs: runs)
        add(pack)
        let ourSize = try FileSystem.status(ours).size
        let zipSize = try FileSystem.status(theirs).size
        let zipStoredSize = try FileSystem.status(theirsStored).size
        table.add(["archive size: pkgtool / zip -6 / zip -6 -n", "\(ourSize)", "\(zipSize)", "\(zipStoredSize)", "", ""])
        let packSpeed = pack[1].median / pack[0].median
        let packSpeedExpert = pack[2].median / pack[0].median
        let sizeRatio = Double(ourSize) / Double(zipSize)
        verdict("pack vs zip -r -6", packSpeed, "≥ 5×", packSpeed >= 5, figure: "pack_speed_vs_zip6")
        verdict("pack vs zip -r -6 -n", packSpeedExpert, "≥ 1.2×", packSpeedExpert >= 1.2, figure: "pack_speed_vs_zip6n")
        verdict("archive size vs zip -6", sizeRatio, "≤ 1.01×", sizeRatio <= 1.01, figure: "size_vs_zip6")

        // 2. 100,000 small files.
        log("packing \(manySmallFiles) small files")
        let small = try measureInterleaved(
            [
                ("pkgtool pack (100k small)", { try Spawn.run(self.pkgtool, ["pack", "--fresh", smallTree, scratch + "/small.zip"]) }),
                (
                    "zip -r -6 (100k small)",
                    { try shell("rm -f '\(scratch)/small6.zip' && cd '\(smallTree)' && '\(zip)' -qr -6 '\(scratch)/small6.zip' .") }
                ),
            ], runs: runs)
        add(small)
        let smallSpeed = small[1].median / small[0].median
        verdict("100k small files: pack vs zip -r -6", smallSpeed, "≥ 1.7×", smallSpeed >= 1.7, figure: "small_pack_speed_vs_zip6")

        // 3. Unpack pkgtool's archive of the document package.
        log("unpacking: pkgtool, unzip, bsdtar, 7z (fresh directories)")
        var unpackJobs: [(name: String, run: () throws -> ProcessCost)] = [
            ("pkgtool unpack", { try Spawn.run(self.pkgtool, ["unpack", ours, fresh("pk")]) }),
            ("unzip -q", { try Spawn.run(unzip, ["-q", ours, "-d", fresh("uz")]) }),
        ]
        if let bsdtar {
            unpackJobs.append(("bsdtar -xf", { let d = fresh("bt"); return try shell("mkdir '\(d)' && '\(bsdtar)' -xf '\(ours)' -C '\(d)'") }))
        }
        if let sevenZip {
            unpackJobs.append(("7z x", { try Spawn.run(sevenZip, ["x", "-bso0", "-bsp0", "-o" + fresh("7z"), ours]) }))
        }
        let unpack = try measureInterleaved(unpackJobs, runs: runs)
        add(unpack)
        let fastestPeer = unpack.dropFirst().map(\.median).min() ?? unpack[0].median
        let unpackSpeed = fastestPeer / unpack[0].median
        verdict("unpack vs fastest peer", unpackSpeed, "≥ 1×", unpackSpeed >= 1, figure: "unpack_speed_vs_fastest")

        // 4. Verify.
        log("verifying: pkgtool, 7z t, unzip -t")
        var verifyJobs: [(name: String, run: () throws -> ProcessCost)] = [
            ("pkgtool verify", { try Spawn.run(self.pkgtool, ["verify", ours]) }),
            ("unzip -tq", { try Spawn.run(unzip, ["-tq", ours]) }),
        ]
        if let sevenZip { verifyJobs.append(("7z t", { try Spawn.run(sevenZip, ["t", "-bso0", "-bsp0", ours]) })) }
        let verify = try measureInterleaved(verifyJobs, runs: runs)
        add(verify)
        if verify.count == 3 {
            let verifySpeed = verify[2].median / verify[0].median
            verdict("verify vs 7z t", verifySpeed, "≥ 1×", verifySpeed >= 1, figure: "verify_speed_vs_7z")
        }

        // 5. Repack after one changed small file, against zip -u on its own archive. Each run
        //    starts from a fresh copy of the archive, flushed to disk (untimed). The main row
        //    is `--keep-previous` in its steady state: the warm-up run keeps the replaced
        //    archive as `.repack-keep.zip.pkgtool-previous`, and every measured run writes
        //    over it. The plain repack (no previous file, as a first repack) is shown beside.
        log("repacking after one changed small file: pkgtool --keep-previous, --compact, zip -u, default (append)")
        // The package workflow keeps a manifest (stat cache) in the package, as `pkgtool
        // save` does; zip -u has its own shortcut, the modification times in its archive.
        _ = try Spawn.run(pkgtool, ["manifest", document])
        let changed = document + "/pages/d7/s3/f7300.json"
        let original = try Data(contentsOf: URL(fileURLWithPath: changed))
        defer { try? original.write(to: URL(fileURLWithPath: changed)) }
        var edition = 0
        func touch() throws {
            edition += 1
            try Data(#"{"edited": \#(edition)}"#.utf8).write(to: URL(fileURLWithPath: changed))
        }
        let repackKeepOut = scratch + "/repack-keep.zip"
        let repackOut = scratch + "/repack.zip"
        let repackAppendOut = scratch + "/repack-append.zip"
        let zipUpdateOut = scratch + "/zipu.zip"
        let repack = try measureInterleaved(
            [
                (
                    "pkgtool pack --keep-previous (repack, 1 small file changed)",
                    {
                        try original.write(to: URL(fileURLWithPath: changed))
                        _ = try shell("cp '\(ours)' '\(repackKeepOut)' && sync")
                        try touch()
                        return try Spawn.run(self.pkgtool, ["pack", "--keep-previous", document, repackKeepOut])
                    }
                ),
                (
                    "pkgtool pack --compact (rewrite: no previous file)",
                    {
                        try original.write(to: URL(fileURLWithPath: changed))
                        _ = try shell("cp '\(ours)' '\(repackOut)' && sync")
                        try touch()
                        return try Spawn.run(self.pkgtool, ["pack", "--compact", document, repackOut])
                    }
                ),
                (
                    "zip -u (1 small file changed)",
                    {
                        try original.write(to: URL(fileURLWithPath: changed))
                        _ = try shell("cp '\(theirs)' '\(zipUpdateOut)' && sync")
                        try touch()
                        return try shell("cd '\(document)' && '\(zip)' -qru -6 '\(zipUpdateOut)' .")
                    }
                ),
                (
                    "pkgtool pack (default: append in place)",
                    {
                        try original.write(to: URL(fileURLWithPath: changed))
                        _ = try shell("cp '\(ours)' '\(repackAppendOut)' && sync")
                        try touch()
                        return try Spawn.run(self.pkgtool, ["pack", document, repackAppendOut])
                    }
                ),
            ], runs: runs)
        add(repack)
        let appendRatio = repack[3].median / repack[2].median
        figures.append(("append_repack_time_vs_zip_u", .double(appendRatio)))
        table.add([
            "repack (default, append in place) time / zip -u time (want ≤ 0.5×)",
            Format.ratio(appendRatio) + (appendRatio <= 0.5 ? "" : "  not met"), "", "", "", "",
        ])
        let repackRatio = repack[0].median / repack[2].median
        let firstRepackRatio = repack[1].median / repack[2].median
        figures.append(("repack_time_vs_zip_u", .double(repackRatio)))
        figures.append(("first_repack_time_vs_zip_u", .double(firstRepackRatio)))
        table.add([
            "repack --keep-previous time / zip -u time (want ≤ 0.5×)",
            Format.ratio(repackRatio) + (repackRatio <= 0.5 ? "" : "  not met"), "", "", "", "",
        ])
        table.add(["repack --compact (no previous file) time / zip -u time", Format.ratio(firstRepackRatio), "", "", "", ""])

        // 6. Peak memory on a 4 GiB file.
        log("peak memory packing and unpacking a sparse \(Format.bytes(hugeSize)) file")
        let hugeTree = scratch + "/huge"
        try FileSystem.makeDirectories(hugeTree)
        try FixtureWriter.sparseFile(hugeTree + "/huge.bin", size: hugeSize)
        let hugeZip = scratch + "/huge.zip"
        let hugePack = try Spawn.run(pkgtool, ["pack", "--fresh", hugeTree, hugeZip])
        try FileSystem.remove(hugeTree + "/huge.bin")
        let hugeUnpack = try Spawn.run(pkgtool, ["unpack", hugeZip, fresh("huge-out")])
        table.add(["pkgtool pack 4 GiB file", Format.seconds(hugePack.seconds), "", "", Format.bytes(hugePack.peakRSSBytes), ""])
        table.add(["pkgtool unpack 4 GiB file", Format.seconds(hugeUnpack.seconds), "", "", Format.bytes(hugeUnpack.peakRSSBytes), ""])
        let peak = max(hugePack.peakRSSBytes, hugeUnpack.peakRSSBytes)
        figures.append(("huge_file_peak_rss_bytes", .int(peak)))
        table.add(["4 GiB peak RSS (want ≤ 64 MiB)", Format.bytes(peak) + (peak <= 64 << 20 ? "" : "  not met"), "", "", "", ""])
        figures.append(("pack_document_median_seconds", .double(pack[0].median)))
        allSamples.append(Sample(name: "pkgtool pack 4 GiB file", costs: [hugePack]))
        allSamples.append(Sample(name: "pkgtool unpack 4 GiB file", costs: [hugeUnpack]))
        return Result(table: table, figures: figures, samples: allSamples)
    }

    private func absolute(_ path: String) throws -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }
}
