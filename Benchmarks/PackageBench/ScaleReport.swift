import Foundation

/// The scale suite in the reports: per operation, time and peak RSS against the number of
/// files (log-log, pkgtool's jobs and the peers as series), and one table with each
/// pkgtool job's memory per file above the fixed 32 MiB (issue 30's goal: ≤ 300 B).
enum ScaleReport {
    static let suite = "scale"

    /// The rows of the scale suite, by operation in the order they run, then job, then files.
    static func rows(_ record: BenchmarkRecord) -> [JobMeasurement] {
        let order = Dictionary(uniqueKeysWithValues: ScaleSuite.Operation.allCases.enumerated().map { ($1.rawValue, $0) })
        let jobs = TextReport.unique(record.measurements(suite: suite).map(\.job))
        return record.measurements(suite: suite).sorted {
            (order[$0.scenario ?? ""] ?? 99, jobs.firstIndex(of: $0.job) ?? 0, $0.packageEntries ?? 0)
                < (order[$1.scenario ?? ""] ?? 99, jobs.firstIndex(of: $1.job) ?? 0, $1.packageEntries ?? 0)
        }
    }

    /// "212 B" of peak RSS above 32 MiB per file, for pkgtool's jobs ("" for the peers).
    static func perFileCell(_ m: JobMeasurement) -> String {
        guard m.tool == "pkgtool", let peak = m.peakRssBytes, let files = m.packageEntries else { return "" }
        return ScaleSuite.perEntry(peak, files: files)
    }

    static func title(_ scenario: String?) -> String {
        scenario.flatMap { ScaleSuite.Operation(rawValue: $0)?.title } ?? scenario ?? ""
    }

    static func html(_ record: BenchmarkRecord) -> String {
        let rows = rows(record)
        guard !rows.isEmpty else { return "" }
        let counts = TextReport.unique(rows.compactMap(\.packageEntries).sorted().map(String.init)).compactMap(Int.init)
        var html = "<h2>Scale: \(counts.map(Format.count).joined(separator: " → ")) files</h2>\n"
        html += "<p class=\"meta\">Each point is a generated package of small files (0–4 KiB, 100 to a folder, ten folders to a group), taken through every operation beside the tool people would use instead; time and peak RSS against the number of files, both on log scales. The points run one after another (a point is removed before the next is made); from \(Format.count(ScaleSuite.singleRunFrom)) files one run and no warm-up. The goal is a peak RSS of at most 32 MiB + 300 B per file for every pkgtool job (the table's last column).</p>\n"
        for operation in ScaleSuite.Operation.allCases {
            let operationRows = rows.filter { $0.scenario == operation.rawValue }
            guard !operationRows.isEmpty else { continue }
            html += "<h3>\(HTMLReport.escape(operation.title))</h3>\n"
            html += HTMLReport.lineChart(
                id: "scale-\(operation.rawValue)", rows: operationRows, axis: .files, panels: [.seconds, .peakRSS])
        }
        html += "<div class=\"scroll\"><table class=\"data scale\">\n<tr><th>operation</th><th>job</th><th>files</th><th>runs</th><th>median</th><th>min</th><th>max</th><th>written</th><th>peak RSS</th><th title=\"(peak RSS − 32 MiB) / files\">per file</th></tr>\n"
        for m in rows {
            html += "<tr><td>\(HTMLReport.escape(m.scenario ?? ""))</td><td title=\"\(HTMLReport.escape(m.command))\">\(HTMLReport.escape(m.job))</td><td class=\"num\">\(m.packageEntries.map(Format.count) ?? "")</td><td class=\"num\">\(m.runs)</td>"
            html += "<td class=\"num\">\(Format.seconds(m.seconds.median))</td><td class=\"num\">\(Format.seconds(m.seconds.min))</td><td class=\"num\">\(Format.seconds(m.seconds.max))</td>"
            html += "<td class=\"num\">\(Format.bytes(Int64(m.bytesWritten.median)))</td><td class=\"num\">\(m.peakRssBytes.map(Format.bytes) ?? "–")</td><td class=\"num\">\(HTMLReport.escape(perFileCell(m)))</td></tr>\n"
        }
        return html + "</table></div>\n"
    }

    static func text(_ record: BenchmarkRecord) -> String {
        let rows = rows(record)
        guard !rows.isEmpty else { return "" }
        var out = "\nscale: time and peak RSS against the number of files (per file = (peak RSS − 32 MiB) / files, pkgtool's jobs)\n"
        var table = Table(["operation", "job", "files", "runs", "median", "min–max", "written", "peak RSS", "per file"])
        var previous: String?
        for m in rows {
            if let previous, previous != m.scenario { table.add(Array(repeating: "", count: 9)) }
            previous = m.scenario
            table.add([
                m.scenario ?? "", m.job, m.packageEntries.map(Format.count) ?? "", String(m.runs), Format.seconds(m.seconds.median),
                Format.secondsRange(m.seconds.min, m.seconds.max), Format.bytes(Int64(m.bytesWritten.median)),
                m.peakRssBytes.map(Format.bytes) ?? "–", perFileCell(m),
            ])
        }
        out += table.rendered
        for shape in record.shapes where shape.edits[ScaleSuite.Operation.edit.rawValue] != nil {
            out += "  \(shape.slug) edit-100 (last): \(shape.edits[ScaleSuite.Operation.edit.rawValue]!.description)\n"
        }
        return out
    }
}
