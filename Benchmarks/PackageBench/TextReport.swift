import Foundation

/// The tables a run prints at the end.
enum TextReport {
    static func render(_ record: BenchmarkRecord) -> String {
        var out = ""
        let run = record.pkgbench
        out += "pkgbench \(run.mode) · \(run.build) build · \(run.started) · \(String(format: "%.0f", run.durationSeconds)) s\n"
        if run.build != "release" {
            out += "WARNING: pkgbench is a \(run.build) build: these figures are not representative\n"
        }
        out += "machine: \(record.machine.summary)\n"
        out += "\(record.runs) runs after \(record.warmups) warm-up, jobs interleaved; times are median, min, max; "
        out += "written = bytes written measured from outside (/proc/PID/io write_bytes), files = files the tool wrote\n"
        for shape in record.shapes {
            out += "package \(shape.slug): \(shape.label) — \(Format.bytes(shape.totalBytes)) in \(Format.count(shape.entries)) entries, seed \(shape.shape.seed)\n"
        }

        let save = record.measurements(suite: "save")
        for slug in unique(save.map { $0.shape ?? "" }) {
            out += "\nsave: \(slug)"
            if let shape = record.shapes.first(where: { $0.slug == slug }) {
                out += " (\(Format.bytes(shape.totalBytes)), \(Format.count(shape.entries)) entries)"
            }
            if let filesystem = record.shapes.first(where: { $0.slug == slug })?.targetFilesystem {
                out += "\ntargets on \(filesystem); device = bytes the loop device wrote (sectors × 512, flushed before and after)"
            }
            out += "\n"
            let rows = save.filter { $0.shape == slug }
            // Chunk-level counters and device writes only where some row has them.
            let patched = rows.contains { ($0.filesPatched ?? 0) + ($0.filesCloned ?? 0) > 0 }
            let device = rows.contains { $0.deviceBytesWritten != nil }
            var header = ["scenario", "job", "fsync", "median", "min–max", "written", "(engine)", "files", "peak RSS", "time/full", "written/full"]
            if patched { header.insert("patched", at: 8) }
            if device { header.insert("device", at: 6) }
            var table = Table(header)
            var previous: String?
            for m in rows {
                if let previous, previous != m.scenario { table.add(Array(repeating: "", count: header.count)) }
                previous = m.scenario
                var cells = row(m, first: m.scenario ?? "", ratios: true)
                if patched { cells.insert(patchedCell(m), at: 8) }
                if device { cells.insert(m.deviceBytesWritten.map { Format.bytes(Int64($0.median)) } ?? "", at: 6) }
                table.add(cells)
            }
            out += table.rendered
            if patched {
                out += "  patched = files the save patched in place (P) or cloned and patched (C): the changed chunks' bytes\n"
            }
            if let shape = record.shapes.first(where: { $0.slug == slug }) {
                for scenario in unique(save.filter { $0.shape == slug }.compactMap(\.scenario)) {
                    if let edit = shape.edits[scenario] {
                        out += "  \(scenario): \(edit.description)\n"
                    }
                }
            }
        }

        out += baselineComparison(record)

        for (suite, title) in [("diff", "diff (no change)"), ("hash", "hash")] {
            let rows = record.measurements(suite: suite)
            guard !rows.isEmpty else { continue }
            out += "\n\(title)\n"
            var table = Table(["package", "job", "median", "min", "max", "written", "peak RSS", "cores busy"])
            for m in rows {
                table.add([
                    m.shape ?? "", m.job, Format.seconds(m.seconds.median), Format.seconds(m.seconds.min),
                    Format.seconds(m.seconds.max), Format.bytes(Int64(m.bytesWritten.median)),
                    m.peakRssBytes.map(Format.bytes) ?? "–", String(format: "%.2f", m.coresBusy),
                ])
            }
            out += table.rendered
        }

        for (suite, title) in [("sweep-bytes", "sweep (a): one small edit, package bytes grow, entries fixed"),
                               ("sweep-entries", "sweep (b): one small edit, entries grow")] {
            let rows = record.measurements(suite: suite)
            guard !rows.isEmpty else { continue }
            out += "\n\(title)\n"
            var table = Table(["package", "bytes", "entries", "job", "fsync", "median", "min", "max", "written", "files", "peak RSS"])
            let sorted = rows.sorted {
                ($0.job, $0.fsync ?? "", $0.packageBytes ?? 0, $0.packageEntries ?? 0)
                    < ($1.job, $1.fsync ?? "", $1.packageBytes ?? 0, $1.packageEntries ?? 0)
            }
            var previous: String?
            for m in sorted {
                let key = m.job + (m.fsync ?? "")
                if let previous, previous != key { table.add(Array(repeating: "", count: 11)) }
                previous = key
                table.add([
                    m.shape ?? "", m.packageBytes.map(Format.bytes) ?? "", m.packageEntries.map(Format.count) ?? "", m.job,
                    m.fsync ?? "", Format.seconds(m.seconds.median), Format.seconds(m.seconds.min),
                    Format.seconds(m.seconds.max), Format.bytes(Int64(m.bytesWritten.median)),
                    m.filesWritten.map(Format.count) ?? "–", m.peakRssBytes.map(Format.bytes) ?? "–",
                ])
            }
            out += table.rendered
        }

        let sync = record.measurements(suite: "sync")
        if !sync.isEmpty {
            out += "\nsync: \(record.shapes.first { $0.slug == "sync-document" }?.label ?? "")\n"
            var table = Table(["scenario", "job", "median", "min–max", "stored", "requests", "written", "peak RSS"])
            var previous: String?
            for m in sync {
                if let previous, previous != m.scenario { table.add(Array(repeating: "", count: 8)) }
                previous = m.scenario
                table.add([
                    m.scenario ?? "", m.job, Format.seconds(m.seconds.median), Format.secondsRange(m.seconds.min, m.seconds.max),
                    m.bytesStored.map(Format.bytes) ?? "", m.requests.map(Format.count) ?? "",
                    Format.bytes(Int64(m.bytesWritten.median)), m.peakRssBytes.map(Format.bytes) ?? "–",
                ])
            }
            out += table.rendered
            if let shape = record.shapes.first(where: { $0.slug == "sync-document" }) {
                for scenario in ["small-edit", "media-1mib"] {
                    if let edit = shape.edits[scenario] { out += "  \(scenario): \(edit.description)\n" }
                }
            }
        }

        out += ScaleReport.text(record)

        for suite in ["manifest", "zip"] {
            let rows = record.measurements(suite: suite)
            guard !rows.isEmpty else { continue }
            out += "\n\(suite)\n"
            var table = Table(["job", "median", "min", "max", "written", "peak RSS", "cores busy"])
            for m in rows {
                table.add([
                    m.job, Format.seconds(m.seconds.median), Format.seconds(m.seconds.min), Format.seconds(m.seconds.max),
                    Format.bytes(Int64(m.bytesWritten.median)), m.peakRssBytes.map(Format.bytes) ?? "–",
                    String(format: "%.2f", m.coresBusy),
                ])
            }
            out += table.rendered
        }

        if !record.checks.isEmpty {
            out += "\ngoals (not met: slower or larger than intended in this run, never a wrong result)\n"
            var table = Table(["goal", "this run", "aim", "", "why it matters"])
            for check in record.checks {
                table.add([check.name, check.shown, check.want, check.met ? "met" : "not met", check.source])
            }
            out += table.rendered
        }
        if let advice = StrategyAdvice.figures(record), let journaled = advice.strategies["journaled"] {
            out += "\nwhich strategy: journaled (the default) saves in place, crash-safe: \(journaled.shown) here"
            if let rsync = advice.rsync, rsync.seconds > 0 {
                out += " (\(Format.ratio(journaled.seconds / rsync.seconds)) rsync -a's time)"
            }
            out += "; atomic when readers must see the whole old or new version at once"
            if let atomic = advice.strategies["atomic"] { out += " (\(Format.seconds(atomic.seconds)))" }
            out += "; the HTML report says why and at what cost\n"
        }
        for note in record.notes { out += "note: \(note)\n" }
        return out
    }

    static func row(_ m: JobMeasurement, first: String, ratios: Bool) -> [String] {
        [
            first, m.job, m.fsync ?? "", Format.seconds(m.seconds.median), Format.secondsRange(m.seconds.min, m.seconds.max),
            Format.bytes(Int64(m.bytesWritten.median)), m.reportedBytesWritten.map(Format.bytes) ?? "",
            m.filesWritten.map(Format.count) ?? "–", m.peakRssBytes.map(Format.bytes) ?? "–",
            m.ratioToFull.map { Format.ratio($0.seconds) } ?? "", m.ratioToFull.map { Format.ratio($0.bytesWritten) } ?? "",
        ]
    }

    /// "P 1: 3.0 MiB", "C 1: 2.1 MiB", or "" when the save patched nothing.
    static func patchedCell(_ m: JobMeasurement) -> String {
        let patched = m.filesPatched ?? 0
        let cloned = m.filesCloned ?? 0
        guard patched + cloned > 0 else { return "" }
        let kind = (patched > 0 ? "P \(patched)" : "") + (patched > 0 && cloned > 0 ? " " : "") + (cloned > 0 ? "C \(cloned)" : "")
        return kind + ": " + Format.bytes(m.bytesPatched ?? 0)
    }

    /// With `--baseline`: each save beside the same save by the baseline pkgtool, measured
    /// in the same rounds: time and bytes written, and their ratios (this / baseline).
    static func baselineComparison(_ record: BenchmarkRecord) -> String {
        let baselines = record.measurements.filter { $0.tool == Workspace.baselineTool && $0.scenario != Workspace.firstSave }
        guard !baselines.isEmpty else { return "" }
        let out = "\nthis pkgtool beside the baseline (\(record.pkgbench.baseline ?? "--baseline")), same rounds, own packages\n"
        var table = Table([
            "package", "scenario", "strategy", "fsync", "time", "baseline", "time ×", "written", "baseline", "written ×",
        ])
        for old in baselines {
            guard
                let new = record.measurements.first(where: {
                    $0.tool == "pkgtool" && $0.suite == old.suite && $0.shape == old.shape && $0.scenario == old.scenario
                        && $0.strategy == old.strategy && $0.fsync == old.fsync
                })
            else { continue }
            table.add([
                old.shape ?? "", old.scenario ?? "", Workspace.title(old.strategy ?? ""), old.fsync ?? "",
                Format.seconds(new.seconds.median), Format.seconds(old.seconds.median),
                Format.ratio(new.seconds.median / max(old.seconds.median, 1e-12)),
                Format.bytes(Int64(new.bytesWritten.median)), Format.bytes(Int64(old.bytesWritten.median)),
                old.bytesWritten.median > 0 ? Format.ratio(new.bytesWritten.median / old.bytesWritten.median) : "",
            ])
        }
        return out + table.rendered
    }

    static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }
}
