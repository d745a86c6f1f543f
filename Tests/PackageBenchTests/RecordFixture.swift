import Foundation

@testable import PackageBench

/// A made-up record with every kind of measurement the report draws, so that the report
/// test runs in milliseconds and covers every chart.
enum RecordFixture {
    static func measurement(
        suite: String, shape: String?, scenario: String?, job: String, tool: String, strategy: String? = nil,
        fsync: String? = nil, seconds: [Double], written: [Double], files: Int? = nil, bytes: Int64? = nil, entries: Int? = nil
    ) -> JobMeasurement {
        JobMeasurement(
            suite: suite, shape: shape, scenario: scenario, job: job, tool: tool, strategy: strategy, fsync: fsync,
            command: "\(tool) \(job) 'SRC' \"PKG\" <&>", runs: seconds.count, seconds: Distribution(seconds),
            bytesWritten: Distribution(written), bytesRead: Distribution(seconds.map { _ in 0 }), filesWritten: files,
            reportedBytesWritten: tool == "pkgtool" ? Int64(written[0] * 0.9) : nil, peakRssBytes: 30 << 20,
            coresBusy: 0.9, ratioToFull: nil, packageBytes: bytes, packageEntries: entries)
    }

    static func make() -> BenchmarkRecord {
        var record = BenchmarkRecord(
            pkgbench: RunInfo(
                mode: "quick", arguments: ["--quick"], build: "release", started: "2026-12-01 12:00:00 UTC",
                workDirectory: "/work/bench", pkgtool: "/work/.build/release/pkgtool"),
            machine: Machine(
                cores: 2, cpuModel: "AMD EPYC", memoryBytes: 24 << 30, kernel: "Linux 6.18 x86_64",
                workDirectory: "/work/bench", filesystem: "ext4", mountOptions: "rw,relatime", hostname: "vm"),
            tools: ["pkgtool": "pkgtool 0.1.0", "rsync": "rsync  version 3.2.7"], seed: 1, runs: 3, warmups: 1)
        let slug = "document-256MiB"
        var shape = ShapeRecord(
            shape: PackageShape.make(.document, bytes: 256 << 20, seed: 1), slug: slug, label: "document, 256.0 MiB",
            totalBytes: 256 << 20, entries: 20_263, generationSeconds: 1.2)
        shape.edits["small-edit"] = Edit(filesChanged: 1, bytesChanged: 4000, description: "pages/x.json")
        shape.edits["media-1mib"] = Edit(filesChanged: 1, bytesChanged: 9 << 20, description: "media/clip-03.mp4")
        record.shapes = [shape]
        var all: [JobMeasurement] = []
        for (scenario, factor) in [("first-save", 3.0), ("no-change", 0.0), ("small-edit", 1.0), ("media-1mib", 2.0)] {
            for (strategy, base) in [("full", 2.5), ("atomic", 0.4), ("journaled", 0.12)] {
                for fsync in ["none", "full"] {
                    let extra = fsync == "full" ? 1.3 : 1.0
                    let written = strategy == "full" ? 270e6 : factor == 0 ? 0 : 8192 * factor * (strategy == "atomic" ? 100 : 1)
                    all.append(
                        measurement(
                            suite: "save", shape: slug, scenario: scenario, job: "pkgtool save \(strategy)", tool: "pkgtool",
                            strategy: strategy, fsync: fsync,
                            seconds: [base * extra, base * extra * 0.9, base * extra * 1.2].map { $0 * (1 + factor / 10) },
                            written: [written, written, written * 1.01], files: strategy == "full" ? 20_041 : 1))
                }
            }
            all.append(
                measurement(
                    suite: "save", shape: slug, scenario: scenario, job: "rsync -a --delete", tool: "rsync", fsync: "none",
                    seconds: [0.15, 0.14, 0.2], written: [4096 * factor, 4096 * factor, 4096 * factor], files: 1))
            all.append(
                measurement(
                    suite: "save", shape: slug, scenario: scenario, job: "cp -r (full copy)", tool: "cp", fsync: "none",
                    seconds: [1.1, 1.0, 1.4], written: [268e6, 268e6, 268e6], files: 20_041))
        }
        addRatiosToFull(&all)
        all.append(measurement(suite: "diff", shape: slug, scenario: nil, job: "pkgtool diff PKG (no change)", tool: "pkgtool", seconds: [0.1, 0.09, 0.12], written: [0, 0, 0]))
        all.append(measurement(suite: "diff", shape: slug, scenario: nil, job: "find PKG -printf '%s %T@' (stat walk)", tool: "find", seconds: [0.05, 0.04, 0.06], written: [0, 0, 0]))
        all.append(measurement(suite: "hash", shape: slug, scenario: nil, job: "pkgtool hash FILE (21.0 MiB)", tool: "pkgtool", seconds: [0.004, 0.003, 0.005], written: [0, 0, 0]))
        var sweep: [JobMeasurement] = []
        for (index, size) in [Int64(256 << 20), 1 << 30, 4 << 30].enumerated() {
            for (strategy, base) in [("full", 2.5), ("atomic", 0.4), ("journaled", 0.12)] {
                let grow = strategy == "full" ? Double(1 << (2 * index)) : 1 + 0.05 * Double(index)
                sweep.append(
                    measurement(
                        suite: "sweep-bytes", shape: "document-\(Format.compactBytes(size))", scenario: "small-edit",
                        job: "pkgtool save \(strategy)", tool: "pkgtool", strategy: strategy, fsync: "none",
                        seconds: [base * grow, base * grow * 0.95, base * grow * 1.1],
                        written: strategy == "full" ? [Double(size), Double(size), Double(size)] : [20480, 16384, 24576],
                        bytes: size, entries: 20_263))
            }
        }
        for (index, entries) in [10_000, 40_000, 160_000].enumerated() {
            let scale = Double(1 << (2 * index))
            sweep.append(measurement(suite: "sweep-entries", shape: "small-files-\(entries)", scenario: "small-edit", job: "pkgtool save journaled", tool: "pkgtool", strategy: "journaled", fsync: "none", seconds: [0.05 * scale, 0.05 * scale, 0.06 * scale], written: [16384, 16384, 16384], bytes: Int64(entries) * 2048, entries: entries))
            sweep.append(measurement(suite: "sweep-entries", shape: "small-files-\(entries)", scenario: "small-edit", job: "find SRC PKG -printf '%s %T@' (stat walk)", tool: "find", seconds: [0.02 * scale, 0.02 * scale, 0.03 * scale], written: [0, 0, 0], bytes: Int64(entries) * 2048, entries: entries))
            sweep.append(measurement(suite: "sweep-entries", shape: "small-files-\(entries)", scenario: "small-edit", job: "library save journaled", tool: "library", strategy: "journaled", fsync: "none", seconds: [0.004 * (1 + 0.1 * Double(index)), 0.004, 0.005], written: [8192, 8192, 8192], bytes: Int64(entries) * 2048, entries: entries))
        }
        addRatiosToFull(&sweep)
        record.measurements = all + sweep
        record.checks = Checks.evaluate(record)
        record.notes = ["a note with <markup> & \"quotes\""]
        record.commands = ["rsync": "rsync -a --delete --stats SRC/ COPY/"]
        record.pkgbench.durationSeconds = 61
        return record
    }
}
