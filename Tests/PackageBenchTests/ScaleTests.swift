import Foundation
import PackageCore
import PackageTestSupport
import PkgToolCLI
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

@testable import PackageBench

/// The scale suite's harness: its options, the layout and determinism of its packages at a
/// small size, its 100-file edit, and its log-log charts (no timings: those belong to runs).
@Suite struct ScaleTests {
    @Test func options() throws {
        let defaults = try BenchmarkOptions.parse(["--suite", "scale"])
        #expect(defaults.suites == ["scale"])
        #expect(defaults.scaleEntries == [10_000, 100_000, 1_000_000])
        #expect(defaults.runs == 3, "the scale suite alone: three runs below a million files")
        let quick = try BenchmarkOptions.parse(["--suite=scale", "--scale-entries", "20_000", "--runs", "1", "--warmups", "0"])
        #expect(quick.scaleEntries == [20_000] && quick.runs == 1 && quick.warmups == 0)
        let listed = try BenchmarkOptions.parse(["--suite", "save,scale", "--scale-entries=1000,300000"])
        #expect(listed.suites == ["save", "scale"] && listed.scaleEntries == [1_000, 300_000])
        #expect(listed.runs == 5, "beside other suites the run's own default")
        // Not part of any mode's default suites: it needs SeaweedFS and an hour.
        for mode in [["--quick"], ["--sweep"], []] {
            #expect(!(try BenchmarkOptions.parse(mode)).suites.contains("scale"))
        }
        for wrong in [["--scale-entries", "0"], ["--scale-entries", "10k"], ["--scale-entries"]] {
            #expect(throws: UsageError.self) { try BenchmarkOptions.parse(["--suite", "scale"] + wrong) }
        }
        #expect(BenchmarkCommand.usage.contains("--scale-entries"))
    }

    static let shape = PackageShape.make(.smallFiles, entries: 2_345, seed: 9)

    /// Same seed, same tree; pages of 0–4 KiB, at most 100 to a folder, ten folders to a
    /// group: a million files never land in one directory.
    @Test func layoutAndDeterminism() throws {
        let directory = try TemporaryDirectory("scale-shape")
        let a = try ShapeGenerator.generate(Self.shape, at: directory.url("a"))
        _ = try ShapeGenerator.generate(Self.shape, at: directory.url("b"))
        var other = Self.shape
        other.seed = 10
        _ = try ShapeGenerator.generate(other, at: directory.url("c"))
        let snapshot = try TreeScanner(workers: 2).scan(directory.url("a")).snapshot
        #expect(snapshot.rootHash == (try TreeScanner(workers: 2).scan(directory.url("b")).snapshot.rootHash))
        #expect(snapshot.rootHash != (try TreeScanner(workers: 2).scan(directory.url("c")).snapshot.rootHash))
        let files = snapshot.entries.filter { $0.kind == .regular && $0.path != "metadata.json" }
        #expect(files.count == 2_345 && a.smallFiles.count == 2_345)
        #expect(files.allSatisfy { $0.size <= 4096 })
        var perFolder: [String: Int] = [:]
        for file in files {
            let parts = file.path.split(separator: "/")
            #expect(parts.count == 4 && parts[0] == "files", "files/gNNN/fN/pNNNNNNN.ext: \(file.path)")
            perFolder[parts.dropLast().joined(separator: "/"), default: 0] += 1
        }
        #expect(perFolder.values.allSatisfy { $0 <= 100 })
        #expect(perFolder.count == 24)
        let groups = snapshot.entries.filter { $0.kind == .directory && $0.path.split(separator: "/").count == 2 }
        #expect(groups.count == 3)
    }

    /// The edit rewrites 100 files spread over the folders, new ones each time, same sizes.
    @Test func editSpreadsOverTheTree() throws {
        let directory = try TemporaryDirectory("scale-edit")
        let tree = SourceTree(try ShapeGenerator.generate(Self.shape, at: directory.url("src")))
        let before = try TreeScanner(workers: 2).scan(directory.url("src")).snapshot.entries
        let first = try tree.rewriteSpread(100)
        let middle = try TreeScanner(workers: 2).scan(directory.url("src")).snapshot.entries
        _ = try tree.rewriteSpread(100)
        let after = try TreeScanner(workers: 2).scan(directory.url("src")).snapshot.entries
        func touched(_ old: [SnapshotEntry], _ new: [SnapshotEntry]) -> [SnapshotEntry] {
            zip(old, new).filter { $0.0.modificationTime != $0.1.modificationTime }.map(\.1)
        }
        let once = touched(before, middle)
        let twice = touched(middle, after)
        #expect(once.count == 100 && twice.count == 100)
        #expect(Set(once.map(\.path)).isDisjoint(with: Set(twice.map(\.path))))
        #expect(Set(once.map { $0.path.split(separator: "/").dropLast().joined(separator: "/") }).count >= 20)
        #expect(zip(before, middle).allSatisfy { $0.0.path == $0.1.path && $0.0.size == $0.1.size })
        #expect(first.filesChanged > 50 && first.filesChanged <= 100)
    }

    /// A scale record: three points, an operation with two pkgtool jobs and a peer.
    static func record() -> BenchmarkRecord {
        var record = RecordFixture.make()
        record.measurements = []
        record.checks = []
        for (index, files) in [10_000, 100_000, 1_000_000].enumerated() {
            let grow = Double(index + 1) * 3
            for (scenario, job, tool, strategy, seconds) in [
                ("first-save", "pkgtool save", "pkgtool", nil, 0.8), ("first-save", "cp -a + sync", "cp", nil, 0.5),
                ("diff", "pkgtool diff PKG", "pkgtool", nil, 0.05), ("diff", "pkgtool diff SRC PKG", "pkgtool", "two-trees", 0.09),
                ("diff", "rsync -a --delete --dry-run", "rsync", nil, 0.07), ("push", "restic backup", "restic", nil, 2.0),
            ] as [(String, String, String, String?, Double)] {
                var m = RecordFixture.measurement(
                    suite: "scale", shape: "small-files-\(files)", scenario: scenario, job: job, tool: tool, strategy: strategy,
                    seconds: [seconds * grow, seconds * grow * 0.9, seconds * grow * 1.1], written: [1e6, 1e6, 1e6],
                    bytes: Int64(files) * 2048, entries: files)
                m.peakRssBytes = Int64(20 << 20) + Int64(files) * (tool == "pkgtool" ? 200 : 900)
                record.measurements.append(m)
            }
        }
        return record
    }

    /// Well-formed SVG: each chart parses as XML on its own; one point per measurement
    /// and metric, at its figure, further right with more files and higher with more time.
    @Test func chartsAreWellFormedAndDrawTheFigures() throws {
        let record = try BenchmarkRecord.decode(try Self.record().encoded())
        let html = HTMLReport.render(record)
        var charts: [String] = []
        var rest = html[...]
        while let start = rest.range(of: "<svg "), let end = rest[start.lowerBound...].range(of: "</svg>") {
            let svg = String(rest[start.lowerBound..<end.upperBound])
            if svg.contains("data-chart=\"scale-") { charts.append(svg) }
            rest = rest[end.upperBound...]
        }
        #expect(charts.count == 3, "first-save, diff, push")
        for svg in charts {
            let parser = XMLParser(data: Data(svg.utf8))
            #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        }
        let points = ReportTests.elements("circle", in: html).filter { $0.attributes["class"] == "point" }
        #expect(points.count == record.measurements.count * 2)
        let byID = Dictionary(uniqueKeysWithValues: record.measurements.map { ($0.id, $0) })
        var placed: [String: [(files: Int, value: Double, x: Double, y: Double)]] = [:]
        for point in points {
            let m = try #require(byID[point.attributes["data-id"] ?? ""])
            let metric = try #require(HTMLReport.Metric(rawValue: point.attributes["data-metric"] ?? ""))
            let value = try #require(Double(point.attributes["data-value"] ?? ""))
            #expect(value == metric.value(m))
            let x = try #require(Double(point.attributes["cx"] ?? ""))
            let y = try #require(Double(point.attributes["cy"] ?? ""))
            placed[m.job + metric.rawValue, default: []].append((m.packageEntries ?? 0, value, x, y))
        }
        for (_, series) in placed {
            for a in series {
                for b in series where a.files < b.files {
                    #expect(a.x < b.x)
                    if a.value < b.value { #expect(a.y > b.y) }
                }
            }
        }
        // One line per series and panel; two pkgtool jobs in one chart in two colours.
        let lines = ReportTests.elements("polyline", in: html)
        #expect(lines.count == 6 * 2)
        let diffColours = Set(lines.filter { ($0.attributes["data-series"] ?? "").hasPrefix("pkgtool diff") }.map { $0.attributes["stroke"] ?? "" })
        #expect(diffColours.count == 2)
        #expect(html.contains("<h2>Scale: 10,000 → 100,000 → 1,000,000 files</h2>"))
    }

    /// Both reports' tables give pkgtool's memory per file above 32 MiB, not the peers'.
    @Test func tablesGiveMemoryPerFile() throws {
        let record = Self.record()
        let text = TextReport.render(record)
        // (20 MiB + 1,000,000 × 200 B − 32 MiB) / 1,000,000 files ≈ 187 B.
        let perFile = ScaleSuite.perEntry(Int64(20 << 20) + 200_000_000, files: 1_000_000)
        #expect(perFile == "187 B/file")
        #expect(ScaleSuite.perEntry(20 << 20, files: 10) == "≤ 32 MiB")
        #expect(text.contains("scale: time and peak RSS") && text.contains(perFile))
        let html = HTMLReport.render(record)
        #expect(html.contains("<td class=\"num\">\(perFile)</td>"))
        let restic = record.measurements.first { $0.tool == "restic" }!
        #expect(ScaleReport.perFileCell(restic) == "")
        let checks = ScaleSuite.checks(record.measurements.filter { $0.packageEntries == 1_000_000 }, files: 1_000_000, equal: true)
        #expect(checks.count == 2 && checks.allSatisfy(\.met))
        let tight = ScaleSuite.checks(record.measurements.filter { $0.packageEntries == 10_000 }, files: 100_000_000, equal: false)
        #expect(tight.filter(\.met).count == 1)
    }
}
