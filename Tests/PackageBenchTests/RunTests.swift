import Foundation
import PackageCore
import PackageTestSupport
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

    @Test(.enabled(if: toolsBuilt, "pkgtool and pkgbench-measure are built beside the tests"))
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
}
