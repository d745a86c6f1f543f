import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import Testing

@testable import PackageBench

/// A whole run on a tiny package, through the real pkgtool and pkgbench-measure built
/// beside the tests: the harness's plumbing (targets, edits, peers, verification, record,
/// report, clean-up), with no assertion on time.
@Suite struct RunTests {
    static let directory: String = {
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (selfPath as NSString).deletingLastPathComponent
    }()
    static var toolsBuilt: Bool {
        FileManager.default.isExecutableFile(atPath: directory + "/pkgtool")
            && FileManager.default.isExecutableFile(atPath: Spawn.measureTool)
    }

    @Test(Prerequisite.needs(toolsBuilt, "pkgtool and pkgbench-measure built beside the tests"))
    func tinyQuickRun() throws {
        let work = try TemporaryDirectory("bench-run")
        var options = try BenchmarkOptions.parse([
            "--quick", "--size", "2MiB", "--entries", "200", "--runs", "1", "--scenario", "small-edit,media-1mib,rename",
            "--workdir", work.path, "--pkgtool", Self.directory + "/pkgtool", "--quiet",
        ])
        options.arguments = ["--quick"]
        var runner = BenchmarkRunner(options: options)
        runner.printsSummary = false
        let record = try runner.run()

        // Read back as written.
        let json = try BenchmarkRecord.decode(try Data(contentsOf: URL(fileURLWithPath: work.path + "/pkgbench-quick-results.json")))
        #expect(json.measurements.count == record.measurements.count)
        let html = try String(contentsOfFile: work.path + "/pkgbench-quick-report.html", encoding: .utf8)
        #expect(html.contains("data-chart=\"save-document-2MiB\""))
        // The generated data is gone, the results stay.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).sorted()
            == ["pkgbench-quick-report.html", "pkgbench-quick-results.json"])

        let shape = try #require(record.shapes.first)
        #expect(shape.totalBytes == 2 << 20)
        func row(_ scenario: String, _ job: String, _ fsync: String = "none") -> JobMeasurement? {
            record.measurements.first { $0.suite == "save" && $0.scenario == scenario && $0.job == job && $0.fsync == fsync }
        }
        // One small file: one file written by the incremental strategies and rsync, all by full.
        #expect(row("small-edit", "pkgtool save journaled")?.filesWritten == 1)
        #expect(row("small-edit", "pkgtool save atomic", "full")?.filesWritten == 1)
        #expect(row("small-edit", "rsync -a --delete")?.filesWritten == 1)
        #expect(row("small-edit", "pkgtool save full")?.filesWritten == 1 + 200 + 40)
        #expect(row("small-edit", "cp -r (full copy)")?.filesWritten == 1 + 200 + 40)
        #expect((row("small-edit", "pkgtool save full")?.bytesWritten.median ?? 0) >= Double(2 << 20))
        // rsync has no rename detection: it sends the renamed file again.
        #expect(row("rename", "rsync -a --delete")?.filesWritten == 1)
        #expect((row("rename", "pkgtool save journaled")?.filesWritten ?? 2) <= 1)
        // Ratios only beside a measured full.
        #expect(row("small-edit", "pkgtool save journaled")?.ratioToFull != nil)
        #expect(row("rename", "pkgtool save journaled")?.ratioToFull == nil)
        // The first saves that made the packages are recorded too.
        #expect(record.measurements.contains { $0.scenario == "first-save" && $0.strategy == "journaled" })
        #expect(record.measurements.contains { $0.suite == "diff" })
        #expect(record.measurements.contains { $0.suite == "hash" && $0.tool == "pkgtool" })
        #expect(record.checks.contains { $0.name == "quick run: total time" })
        // Reproducibility: the seed, the shapes, the commands and the tools.
        #expect(json.seed == 1)
        #expect(json.shapes[0].shape == PackageShape.make(.document, bytes: 2 << 20, entries: 200, seed: 1))
        #expect(json.commands["rsync"] == "rsync -a --delete --stats SRC/ COPY/")
        #expect(json.tools["pkgtool"]?.hasPrefix("pkgtool ") == true)
        #expect(json.measurements.allSatisfy { !$0.command.isEmpty })
    }

    /// The large-file suite on a tiny media package (a 10 MiB film beside a 1 MiB document):
    /// every strategy and both rsync peers on one change, the engine's own counters, the
    /// byte-for-byte comparison, and — where an XFS image can be mounted (root, xfsprogs) —
    /// the same with the packages on XFS, measured by the loop device's writes.
    @Test(Prerequisite.needs(toolsBuilt, "pkgtool and pkgbench-measure built beside the tests"))
    func tinyLargeFileRun() throws {
        let work = try TemporaryDirectory("bench-large")
        var suite = LargeFileSuite(
            sizes: [10 << 20], entries: 30, seed: 5, runs: 1, directory: work.path, pkgtool: Self.directory + "/pkgtool")
        suite.documentBytes = 1 << 20
        let result = try suite.run(progress: ProgressDisplay(quiet: true))
        var record = BenchmarkRecord(
            pkgbench: RunInfo(mode: "full", arguments: [], build: "debug", started: "", workDirectory: work.path, pkgtool: ""),
            machine: Machine.current(workDirectory: work.path), tools: [:], seed: 5, runs: 1, warmups: 1)
        record.shapes = result.shapes
        record.measurements = result.measurements
        let checks = result.checks + Checks.evaluate(record)

        let slug = "media-10MiB"
        func row(_ shape: String, _ job: String, _ fsync: String = "none") -> JobMeasurement? {
            result.measurements.first { $0.shape == shape && $0.scenario == "large-file" && $0.job == job && $0.fsync == fsync }
        }
        // Every strategy and policy, rsync and rsync --inplace.
        for strategy in ["full", "atomic", "atomic --keep-previous", "journaled"] {
            for fsync in ["none", "full"] { #expect(row(slug, "pkgtool save \(strategy)", fsync) != nil) }
        }
        let rsync = try #require(row(slug, "rsync -a --delete"))
        let inplace = try #require(row(slug, "rsync -a --delete --inplace --no-whole-file"))
        #expect(rsync.filesWritten == 1 && inplace.filesWritten == 1)
        // journaled patched the film in place: a few chunks, not the file.
        let journaled = try #require(row(slug, "pkgtool save journaled"))
        #expect(journaled.filesPatched == 1 && journaled.filesWritten == 0)
        let patched = try #require(journaled.bytesPatched)
        #expect(patched >= 1 << 20 && patched < 10 << 20)
        #expect(journaled.deviceBytesWritten == nil)
        // On ext4 (no reflinks) the staged strategies write the film whole.
        if record.machine.filesystem == "ext4" {
            #expect(row(slug, "pkgtool save atomic")?.filesCloned == 0)
        }
        // Every target equals its source, checked byte for byte.
        let equal = try #require(checks.first { $0.name.hasPrefix("\(slug): every target equals its source byte for byte") })
        #expect(equal.met, "\(equal.shown): \(result.notes)")
        #expect(checks.contains { $0.name == "\(slug) large-file: journaled (fsync none) bytes written" })
        #expect(checks.contains { $0.name == "\(slug) large-file: journaled (fsync none) / rsync -a --inplace --no-whole-file time" })
        #expect(checks.contains { $0.name.hasPrefix("\(slug) large-file: peak RSS of every save") })

        if let xfs = result.shapes.first(where: { $0.slug == slug + "-xfs" }) {
            #expect(xfs.targetFilesystem == "xfs (loop image)")
            // Every job counts the device's writes; atomic cloned the film and wrote its chunks.
            let jobs = result.measurements.filter { $0.shape == xfs.slug && $0.scenario == "large-file" }
            #expect(jobs.count == 7)
            #expect(jobs.allSatisfy { $0.deviceBytesWritten != nil })
            let atomic = try #require(row(xfs.slug, "pkgtool save atomic"))
            #expect(atomic.filesCloned == 1)
            #expect((atomic.deviceBytesWritten?.median ?? 0) < Double(10 << 20))
            #expect(row(xfs.slug, "pkgtool save atomic", "full") != nil)
            #expect(checks.contains { $0.name == "\(xfs.slug) large-file: atomic (fsync none) bytes the loop device wrote" })
            let equalOnXFS = try #require(checks.first { $0.name.hasPrefix("\(xfs.slug): every target equals") })
            #expect(equalOnXFS.met, "\(equalOnXFS.shown): \(result.notes)")
        } else {
            #expect(result.notes.contains { $0.contains("no XFS measurement") })
        }
        // Nothing left behind: the image unmounted and removed with the data.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path).isEmpty)
    }
}
