import Foundation

/// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched)
/// with the run's charts and tables, drawn from a `BenchmarkRecord`.
///
/// Every bar and point carries the measurement it draws (`data-id`, `data-metric`,
/// `data-value`, the exact median from the JSON) so that a test can check the page against
/// the record. The page is well-formed XML as well as HTML.
public enum HTMLReport {
    /// The page for `record`; each of `others` adds the sections `record` lacks (the
    /// sweeps, say), under a heading that names the separate run they come from.
    public static func render(_ record: BenchmarkRecord, including others: [BenchmarkRecord] = []) -> String {
        var body = ""
        let run = record.pkgbench
        body += "<h1>pkgbench \(escape(run.mode)) run</h1>\n"
        if run.build != "release" {
            body += "<p class=\"warning\">This was a \(escape(run.build)) build of pkgbench: the figures are not representative.</p>\n"
        }
        body += "<p class=\"meta\">\(escape(run.started)) · \(String(format: "%.0f", run.durationSeconds)) s · \(escape(record.machine.summary)) · seed \(record.seed) · \(record.runs) runs after \(record.warmups) warm-up, jobs interleaved (medians; whiskers show min–max)</p>\n"
        body += "<p class=\"meta\">Bytes written are measured from outside each process (<code>/proc/PID/io</code> write_bytes, children included). Rows say which fsync policy pkgtool used: rsync and cp never fsync, so compare them with <code>fsync none</code>.</p>\n"
        body += StrategyAdvice.html(record)
        body += checksSection(record)
        let save = record.measurements(suite: "save")
        for slug in TextReport.unique(save.compactMap(\.shape)) {
            let shape = record.shapes.first { $0.slug == slug }
            let rows = save.filter { $0.shape == slug }
            body += "<h2>Saving: \(escape(shape?.label ?? slug))</h2>\n"
            if let shape {
                body += "<p class=\"meta\">\(escape(Format.bytes(shape.totalBytes))) in \(escape(Format.count(shape.entries))) entries. Each scenario: one new edit per run, then every job brings its own package or copy up to date.</p>\n"
            }
            if let filesystem = shape?.targetFilesystem {
                body += "<p class=\"meta\">The packages and copies are on \(escape(filesystem)), the source on the work directory's file system. A loop device's writes are not in the writing process's counters: <em>device</em> is what the device wrote during each job (sectors written × 512, the file system flushed before and after).</p>\n"
            }
            let device = rows.contains { $0.deviceBytesWritten != nil }
            body += barChart(
                id: "save-\(slug)", rows: rows, group: { m in scenarioTitle(m.scenario, shape: shape) },
                panels: [.seconds, .bytesWritten] + (device ? [.deviceBytes] : []))
            body += measurementTable(rows, ratios: true)
        }
        for (suite, title) in [("diff", "No-change diff against the manifest, beside the stat walks"), ("hash", "Hashing")] {
            let rows = record.measurements(suite: suite)
            guard !rows.isEmpty else { continue }
            body += "<h2>\(escape(title))</h2>\n"
            body += barChart(id: suite, rows: rows, group: { $0.shape ?? suite }, panels: [.seconds])
            body += measurementTable(rows, ratios: false)
        }
        let own = Set(record.measurements.map(\.suite))
        for (suite, title, axis) in [
            ("sweep-bytes", "Sweep (a): one small edit as the package grows (entries fixed)", LineAxis.bytes),
            ("sweep-entries", "Sweep (b): one small edit as the entries grow", LineAxis.entries),
        ] {
            var rows = record.measurements(suite: suite)
            var source: BenchmarkRecord?
            if rows.isEmpty, let other = others.first(where: { !$0.measurements(suite: suite).isEmpty && !own.contains(suite) }) {
                rows = other.measurements(suite: suite)
                source = other
            }
            guard !rows.isEmpty else { continue }
            body += "<h2>\(escape(title))</h2>\n"
            if let source {
                body += "<p class=\"meta included\" data-suite=\"\(suite)\">From a separate \(escape(source.pkgbench.mode)) run, \(escape(source.pkgbench.started)) (\(source.runs) runs after \(source.warmups) warm-up, its points interleaved among themselves; pkgbench \(escape(source.pkgbench.arguments.joined(separator: " ")))). Compare its shapes, not its seconds, with this run's.</p>\n"
                let checks = source.checks.filter { $0.suite == suite }
                if !checks.isEmpty {
                    var sourceOnly = source
                    sourceOnly.checks = checks
                    body += checksSection(sourceOnly, heading: false)
                }
            }
            body += lineChart(id: suite, rows: rows, axis: axis, panels: [.seconds, .bytesWritten])
            body += measurementTable(rows.sorted { ($0.job, $0.fsync ?? "", $0.packageBytes ?? 0) < ($1.job, $1.fsync ?? "", $1.packageBytes ?? 0) }, ratios: true)
        }
        for (suite, title) in [("manifest", "Manifest: a no-change diff of 100,000 files"), ("zip", "ZIP")] {
            let rows = record.measurements(suite: suite)
            guard !rows.isEmpty else { continue }
            body += "<h2>\(escape(title))</h2>\n"
            body += barChart(id: suite, rows: rows, group: { _ in suite }, panels: [.seconds])
            body += measurementTable(rows, ratios: false)
        }
        body += ScaleReport.html(record)
        body += reproduction(record)
        let height = estimatedHeight(body)
        return """
            <!DOCTYPE html>
            <html xmlns="http://www.w3.org/1999/xhtml" lang="en">
            <head>
            <meta charset="utf-8"/>
            <meta name="pkgbench-page-height" content="\(height)"/>
            <title>pkgbench \(escape(run.mode)) · \(escape(run.started))</title>
            <style>
            \(css)
            </style>
            </head>
            <body>
            \(body)</body>
            </html>

            """
    }

    // MARK: Metrics and series

    enum Metric: String {
        case seconds
        case bytesWritten = "bytes_written"
        /// What the loop device under the targets wrote (0 where not measured: no bar).
        case deviceBytes = "device_bytes_written"
        /// The largest peak RSS over the runs (0 for in-process jobs: no point).
        case peakRSS = "peak_rss_bytes"

        func value(_ m: JobMeasurement) -> Double {
            switch self {
            case .seconds: return m.seconds.median
            case .bytesWritten: return m.bytesWritten.median
            case .deviceBytes: return m.deviceBytesWritten?.median ?? 0
            case .peakRSS: return Double(m.peakRssBytes ?? 0)
            }
        }
        /// Whether the row has this figure (device writes only on a loop image's targets).
        func applies(_ m: JobMeasurement) -> Bool { self != .deviceBytes || m.deviceBytesWritten != nil }
        func range(_ m: JobMeasurement) -> (Double, Double) {
            switch self {
            case .seconds: return (m.seconds.min, m.seconds.max)
            case .bytesWritten: return (m.bytesWritten.min, m.bytesWritten.max)
            case .deviceBytes: return (m.deviceBytesWritten?.min ?? 0, m.deviceBytesWritten?.max ?? 0)
            case .peakRSS: return (value(m), value(m))
            }
        }
        func format(_ value: Double) -> String { self == .seconds ? Format.seconds(value) : Format.bytes(Int64(value)) }
        /// A tick label: "10 ms", "1 s", "32 KiB".
        func tickLabel(_ value: Double) -> String {
            if self == .seconds {
                if value >= 1 { return String(format: "%g s", value) }
                if value >= 0.001 { return String(format: "%g ms", value * 1000) }
                return String(format: "%g µs", value * 1_000_000)
            }
            let units = ["B", "KiB", "MiB", "GiB", "TiB"]
            var amount = value
            var unit = 0
            while amount >= 1024 && unit < units.count - 1 {
                amount /= 1024
                unit += 1
            }
            return String(format: "%g %@", amount, units[unit])
        }
        var title: String {
            switch self {
            case .seconds: return "time (median, log scale)"
            case .bytesWritten: return "bytes written (median, log scale)"
            case .deviceBytes: return "device wrote (median, log scale)"
            case .peakRSS: return "peak RSS (largest, log scale)"
            }
        }
        /// Tick values for a log axis between `low` and `high`.
        func ticks(_ low: Double, _ high: Double) -> [Double] {
            var ticks: [Double] = []
            if self == .seconds {
                var tick = pow(10, floor(log10(low)))
                while tick <= high * 1.0001 {
                    if tick >= low * 0.9999 { ticks.append(tick) }
                    tick *= 10
                }
            } else {
                var exponent = Int(floor(log2(low) / 5)) * 5
                while pow(2, Double(exponent)) <= high * 1.0001 {
                    let tick = pow(2, Double(exponent))
                    if tick >= low * 0.9999 { ticks.append(tick) }
                    exponent += 5
                }
            }
            return ticks
        }
    }

    /// A stable colour per job: strategies and peers, darker when pkgtool fsyncs.
    static func color(_ m: JobMeasurement) -> String {
        let fsyncFull = m.fsync == "full" && (m.tool == "pkgtool" || m.tool == "library" || m.tool == Workspace.baselineTool)
        switch (m.tool, m.strategy) {
        case ("pkgtool", "full"): return fsyncFull ? "#8c1c1c" : "#e0524f"
        case ("pkgtool", "atomic"): return fsyncFull ? "#1a4f80" : "#4a90d9"
        case ("pkgtool", "atomic-keep"): return fsyncFull ? "#4b2a80" : "#8e6bd9"
        case ("pkgtool", "journaled"): return fsyncFull ? "#1d6b2a" : "#45b35a"
        case ("library", _): return fsyncFull ? "#5b3a87" : "#9b72cf"
        case ("rsync", "inplace"): return "#b8741a"
        case ("rsync", _): return "#f0a030"
        case (Workspace.baselineTool, _): return fsyncFull ? "#555555" : "#a8a8a8"
        case ("cp", _): return "#8a8a8a"
        case ("find", _): return "#a0785a"
        case ("xxhsum", _), ("zip", _), ("unzip", _), ("7z", _), ("bsdtar", _): return "#f0a030"
        case ("pkgtool", "two-trees"): return "#1a4f80"
        case ("restic", _): return "#2a9d8f"
        default: return "#4a90d9"
        }
    }

    static func seriesName(_ m: JobMeasurement) -> String {
        m.job + (m.fsync.map { m.tool == "pkgtool" || m.tool == "library" || m.tool == Workspace.baselineTool ? " · fsync \($0)" : "" } ?? "")
    }

    static func scenarioTitle(_ scenario: String?, shape: ShapeRecord?) -> String {
        guard let scenario else { return "" }
        if scenario == Workspace.firstSave { return "first save (fresh directory, one run each)" }
        return Scenario(rawValue: scenario)?.title ?? scenario
    }

    // MARK: Bar charts

    /// Horizontal bars on log scales: one row per measurement, grouped, one panel per
    /// metric side by side (the rows align across panels).
    static func barChart(id: String, rows: [JobMeasurement], group: (JobMeasurement) -> String, panels: [Metric]) -> String {
        let labelWidth = 300.0
        // Bars use `barSpan` of each panel; the rest holds the value printed after the longest.
        let panelWidth = 440.0
        let barSpan = 370.0
        let gap = 40.0
        let rowHeight = 17.0
        let groupHeader = 22.0
        let top = 34.0
        var y = top
        var placed: [(JobMeasurement, Double)] = []
        var headers: [(String, Double)] = []
        var previous: String?
        for m in rows {
            let name = group(m)
            if name != previous {
                if previous != nil { y += 6 }
                headers.append((name, y))
                y += groupHeader
                previous = name
            }
            placed.append((m, y))
            y += rowHeight
        }
        let height = y + 26
        let width = labelWidth + Double(panels.count) * (panelWidth + gap)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"\(escape(id))\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\">\n"
        for (name, headerY) in headers {
            svg += "<text class=\"group\" x=\"4\" y=\"\(fmt(headerY + 15))\">\(escape(name))</text>\n"
        }
        for (m, rowY) in placed {
            svg += "<text class=\"label\" x=\"\(fmt(labelWidth - 8))\" y=\"\(fmt(rowY + 12))\" text-anchor=\"end\">\(escape(seriesName(m)))</text>\n"
        }
        for (panelIndex, metric) in panels.enumerated() {
            let left = labelWidth + Double(panelIndex) * (panelWidth + gap)
            let values = rows.map { metric.value($0) }.filter { $0 > 0 }
            let maxima = rows.map { metric.range($0).1 }.filter { $0 > 0 }
            let low = scaleFloor(values.min() ?? 1, metric)
            let high = max(maxima.max() ?? values.max() ?? 1, low * 10)
            func position(_ value: Double) -> Double {
                guard value > low else { return 0 }
                return (log10(value) - log10(low)) / (log10(high) - log10(low)) * barSpan
            }
            svg += "<g class=\"panel\" data-metric=\"\(metric.rawValue)\" data-low=\"\(low)\" data-high=\"\(high)\" data-left=\"\(fmt(left))\" data-width=\"\(fmt(barSpan))\">\n"
            svg += "<text class=\"axis-title\" x=\"\(fmt(left))\" y=\"14\">\(escape(metric.title))</text>\n"
            for tick in metric.ticks(low, high) {
                let x = left + position(tick)
                svg += "<line class=\"grid\" x1=\"\(fmt(x))\" y1=\"\(fmt(top - 6))\" x2=\"\(fmt(x))\" y2=\"\(fmt(height - 20))\"/>\n"
                svg += "<text class=\"tick\" x=\"\(fmt(x))\" y=\"\(fmt(height - 6))\" text-anchor=\"middle\">\(escape(metric.tickLabel(tick)))</text>\n"
            }
            for (m, rowY) in placed where metric.applies(m) {
                let value = metric.value(m)
                let barWidth = value > 0 ? max(position(value), 1.5) : 0
                let (minimum, maximum) = metric.range(m)
                svg += "<rect class=\"bar\" data-id=\"\(escape(m.id))\" data-metric=\"\(metric.rawValue)\" data-value=\"\(value)\" x=\"\(fmt(left))\" y=\"\(fmt(rowY + 2))\" width=\"\(fmt(barWidth))\" height=\"\(fmt(rowHeight - 4))\" fill=\"\(color(m))\"><title>\(escape(seriesName(m))): \(escape(metric.format(value))) (min \(escape(metric.format(minimum))), max \(escape(metric.format(maximum))))</title></rect>\n"
                if maximum > 0 && maximum > minimum {
                    let x1 = left + max(position(minimum), 0)
                    let x2 = left + position(maximum)
                    svg += "<line class=\"whisker\" x1=\"\(fmt(x1))\" y1=\"\(fmt(rowY + rowHeight / 2))\" x2=\"\(fmt(x2))\" y2=\"\(fmt(rowY + rowHeight / 2))\"/>\n"
                }
                // The label goes after the bar and its whisker, whichever ends later.
                let labelX = left + max(barWidth, maximum > 0 ? position(maximum) : 0) + 4
                svg += "<text class=\"value\" data-id=\"\(escape(m.id))\" data-metric=\"\(metric.rawValue)\" x=\"\(fmt(labelX))\" y=\"\(fmt(rowY + 12))\">\(escape(metric.format(value)))</text>\n"
            }
            svg += "</g>\n"
        }
        svg += "</svg>\n"
        return "<div class=\"figure\">\n" + svg + "</div>\n"
    }

    /// The bottom of a log axis: a round value at or below the smallest one.
    static func scaleFloor(_ smallest: Double, _ metric: Metric) -> Double {
        if metric == .seconds { return pow(10, floor(log10(smallest))) }
        return pow(2, floor(log2(smallest) / 5) * 5)
    }

    // MARK: Line charts

    enum LineAxis {
        /// `files`: the scale suite's count of files (its `packageEntries`).
        case bytes, entries, files

        func value(_ m: JobMeasurement) -> Double {
            Double(self == .bytes ? m.packageBytes ?? 0 : Int64(m.packageEntries ?? 0))
        }
        func format(_ value: Double) -> String { self == .bytes ? Format.bytes(Int64(value)) : Format.count(Int(value)) }
        var title: String {
            switch self {
            case .bytes: return "package bytes"
            case .entries: return "entries"
            case .files: return "files (log scale)"
            }
        }
    }

    /// One line per job across the sweep's points, log scales on both axes, one panel per metric.
    static func lineChart(id: String, rows: [JobMeasurement], axis: LineAxis, panels: [Metric]) -> String {
        let panelWidth = 440.0
        let panelHeight = 300.0
        let margin = (left: 70.0, top: 30.0, bottom: 40.0, gap: 90.0)
        let legendWidth = 300.0
        let width = margin.left + Double(panels.count) * (panelWidth + margin.gap) + legendWidth
        let height = margin.top + panelHeight + margin.bottom
        let series = TextReport.unique(rows.map(seriesName))
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"\(escape(id))\" width=\"\(Int(width))\" height=\"\(Int(height))\" viewBox=\"0 0 \(Int(width)) \(Int(height))\" role=\"img\">\n"
        let xs = TextReport.unique(rows.map { String(axis.value($0)) }).compactMap(Double.init).sorted()
        let xLow = (xs.first ?? 1) / 1.25
        let xHigh = (xs.last ?? 2) * 1.25
        for (panelIndex, metric) in panels.enumerated() {
            let left = margin.left + Double(panelIndex) * (panelWidth + margin.gap)
            let values = rows.map { metric.value($0) }.filter { $0 > 0 }
            let low = scaleFloor(values.min() ?? 1, metric)
            let high = max(rows.map { metric.range($0).1 }.max() ?? 1, low * 10)
            func px(_ x: Double) -> Double { left + (log(x) - log(xLow)) / (log(xHigh) - log(xLow)) * panelWidth }
            func py(_ y: Double) -> Double {
                guard y > low else { return margin.top + panelHeight }
                return margin.top + panelHeight - (log10(y) - log10(low)) / (log10(high) - log10(low)) * panelHeight
            }
            svg += "<g class=\"panel\" data-metric=\"\(metric.rawValue)\" data-low=\"\(low)\" data-high=\"\(high)\">\n"
            svg += "<text class=\"axis-title\" x=\"\(fmt(left))\" y=\"16\">\(escape(metric.title))</text>\n"
            svg += "<rect class=\"frame\" x=\"\(fmt(left))\" y=\"\(fmt(margin.top))\" width=\"\(fmt(panelWidth))\" height=\"\(fmt(panelHeight))\"/>\n"
            for tick in metric.ticks(low, high) {
                let y = py(tick)
                svg += "<line class=\"grid\" x1=\"\(fmt(left))\" y1=\"\(fmt(y))\" x2=\"\(fmt(left + panelWidth))\" y2=\"\(fmt(y))\"/>\n"
                svg += "<text class=\"tick\" x=\"\(fmt(left - 6))\" y=\"\(fmt(y + 4))\" text-anchor=\"end\">\(escape(metric.tickLabel(tick)))</text>\n"
            }
            for x in xs {
                svg += "<line class=\"grid\" x1=\"\(fmt(px(x)))\" y1=\"\(fmt(margin.top))\" x2=\"\(fmt(px(x)))\" y2=\"\(fmt(margin.top + panelHeight))\"/>\n"
                svg += "<text class=\"tick\" x=\"\(fmt(px(x)))\" y=\"\(fmt(margin.top + panelHeight + 16))\" text-anchor=\"middle\">\(escape(axis.format(x)))</text>\n"
            }
            svg += "<text class=\"tick\" x=\"\(fmt(left + panelWidth / 2))\" y=\"\(fmt(margin.top + panelHeight + 34))\" text-anchor=\"middle\">\(escape(axis.title))</text>\n"
            // A zero has no place on a log scale: such points (no bytes written) are left out.
            for name in series {
                let points = rows.filter { seriesName($0) == name && metric.value($0) > 0 }.sorted { axis.value($0) < axis.value($1) }
                guard let first = points.first else { continue }
                let path = points.map { "\(fmt(px(axis.value($0)))),\(fmt(py(metric.value($0))))" }.joined(separator: " ")
                svg += "<polyline class=\"series\" data-series=\"\(escape(name))\" points=\"\(path)\" stroke=\"\(color(first))\"/>\n"
                for m in points {
                    let value = metric.value(m)
                    svg += "<circle class=\"point\" data-id=\"\(escape(m.id))\" data-metric=\"\(metric.rawValue)\" data-value=\"\(value)\" cx=\"\(fmt(px(axis.value(m))))\" cy=\"\(fmt(py(value)))\" r=\"3.5\" fill=\"\(color(m))\"><title>\(escape(name)) at \(escape(axis.format(axis.value(m)))): \(escape(metric.format(value)))</title></circle>\n"
                }
            }
            svg += "</g>\n"
        }
        let legendLeft = margin.left + Double(panels.count) * (panelWidth + margin.gap) - 40
        for (index, name) in series.enumerated() {
            guard let m = rows.first(where: { seriesName($0) == name }) else { continue }
            let y = margin.top + 10 + Double(index) * 20
            svg += "<rect x=\"\(fmt(legendLeft))\" y=\"\(fmt(y - 9))\" width=\"14\" height=\"10\" fill=\"\(color(m))\"/>\n"
            svg += "<text class=\"legend\" x=\"\(fmt(legendLeft + 20))\" y=\"\(fmt(y))\">\(escape(name))</text>\n"
        }
        svg += "</svg>\n"
        return "<div class=\"figure\">\n" + svg + "</div>\n"
    }

    // MARK: Tables

    /// The goals this run is held to, in a person's words: what each means, and "not met"
    /// said for what it is (slower or larger than intended here, never a wrong result).
    static func checksSection(_ record: BenchmarkRecord, heading: Bool = true) -> String {
        guard !record.checks.isEmpty else { return "" }
        var html = ""
        if heading {
            let missed = record.checks.filter { !$0.met }.count
            html += "<h2>How this run compares with pkgtool's goals</h2>\n"
            html += "<p class=\"meta\">Each goal is a figure pkgtool aims for on a machine like this one. <em>Not met</em> means this run came out slower or larger than intended — where pkgtool is not yet as fast or as lean as it should be, or where the machine was busy — never that a result was wrong: every copy is checked byte for byte. \(missed == 0 ? "Every goal was met." : "\(missed) of \(record.checks.count) goals were not met.")</p>\n"
        }
        html += "<div class=\"scroll\"><table class=\"checks\">\n<tr><th>goal</th><th>this run</th><th>aim</th><th></th><th>why it matters</th></tr>\n"
        for check in record.checks {
            html += "<tr class=\"\(check.met ? "met" : "missed")\"><td class=\"text\">\(escape(check.name))</td><td class=\"num\">\(escape(check.shown))</td><td>\(escape(check.want))</td><td>\(check.met ? "met" : "not met")</td><td class=\"text\">\(escape(check.source))</td></tr>\n"
        }
        return html + "</table></div>\n"
    }

    static func measurementTable(_ rows: [JobMeasurement], ratios: Bool) -> String {
        let patched = rows.contains { ($0.filesPatched ?? 0) + ($0.filesCloned ?? 0) > 0 }
        let device = rows.contains { $0.deviceBytesWritten != nil }
        var html = "<div class=\"scroll\"><table class=\"data\">\n<tr><th>package</th><th>scenario</th><th>job</th><th>fsync</th><th>median</th><th>min</th><th>max</th><th>written</th><th>engine</th><th>files</th><th>peak RSS</th><th>cores</th>"
        if patched { html += "<th title=\"files patched in place (P) or cloned and patched (C): the changed chunks' bytes\">patched</th>" }
        if device { html += "<th>device wrote</th>" }
        if ratios { html += "<th>time/full</th><th>written/full</th>" }
        html += "</tr>\n"
        for m in rows {
            html += "<tr><td>\(escape(m.shape ?? ""))</td><td>\(escape(m.scenario ?? ""))</td><td title=\"\(escape(m.command))\">\(escape(m.job))</td><td>\(escape(m.fsync ?? ""))</td>"
            html += "<td class=\"num\">\(Format.seconds(m.seconds.median))</td><td class=\"num\">\(Format.seconds(m.seconds.min))</td><td class=\"num\">\(Format.seconds(m.seconds.max))</td>"
            html += "<td class=\"num\">\(Format.bytes(Int64(m.bytesWritten.median)))</td><td class=\"num\">\(m.reportedBytesWritten.map(Format.bytes) ?? "")</td><td class=\"num\">\(m.filesWritten.map(Format.count) ?? "–")</td>"
            html += "<td class=\"num\">\(m.peakRssBytes.map(Format.bytes) ?? "–")</td><td class=\"num\">\(String(format: "%.2f", m.coresBusy))</td>"
            if patched { html += "<td class=\"num\">\(escape(TextReport.patchedCell(m)))</td>" }
            if device { html += "<td class=\"num\">\(m.deviceBytesWritten.map { Format.bytes(Int64($0.median)) } ?? "")</td>" }
            if ratios {
                html += "<td class=\"num\">\(m.ratioToFull.map { Format.ratio($0.seconds) } ?? "")</td><td class=\"num\">\(m.ratioToFull.map { Format.ratio($0.bytesWritten) } ?? "")</td>"
            }
            html += "</tr>\n"
        }
        return html + "</table></div>\n"
    }

    static func reproduction(_ record: BenchmarkRecord) -> String {
        var html = "<h2>Reproducing this run</h2>\n<p class=\"meta\">pkgbench \(escape(record.pkgbench.arguments.joined(separator: " "))) · seed \(record.seed) · work directory \(escape(record.machine.workDirectory)) (\(escape(record.machine.filesystem)), \(escape(record.machine.mountOptions)))</p>\n"
        html += "<div class=\"scroll\"><table class=\"data\">\n<tr><th>package</th><th>shape</th><th>bytes</th><th>entries</th><th>generated in</th></tr>\n"
        for shape in record.shapes {
            html += "<tr><td>\(escape(shape.slug))</td><td>\(escape(shape.label))</td><td class=\"num\">\(Format.bytes(shape.totalBytes))</td><td class=\"num\">\(Format.count(shape.entries))</td><td class=\"num\">\(Format.seconds(shape.generationSeconds))</td></tr>\n"
        }
        html += "</table></div>\n<div class=\"scroll\"><table class=\"data\">\n<tr><th>job</th><th>command</th></tr>\n"
        for key in record.commands.keys.sorted() {
            html += "<tr><td>\(escape(key))</td><td><code>\(escape(record.commands[key]!))</code></td></tr>\n"
        }
        html += "</table></div>\n<div class=\"scroll\"><table class=\"data\">\n<tr><th>tool</th><th>version</th></tr>\n"
        for key in record.tools.keys.sorted() {
            html += "<tr><td>\(escape(key))</td><td>\(escape(record.tools[key]!))</td></tr>\n"
        }
        html += "</table></div>\n"
        if !record.notes.isEmpty {
            html += "<ul class=\"notes\">\n" + record.notes.map { "<li>\(escape($0))</li>\n" }.joined() + "</ul>\n"
        }
        return html
    }

    // MARK: Helpers

    /// About how tall the page renders, in CSS pixels (for the screenshot's window; a
    /// little too tall is fine): the charts' own heights plus a line per table row.
    static func estimatedHeight(_ body: String) -> Int {
        var height = 160.0
        var rest = body[...]
        while let range = rest.range(of: "class=\"chart\"") {
            rest = rest[range.upperBound...]
            if let start = rest.range(of: "height=\"") {
                let digits = rest[start.upperBound...].prefix { $0.isNumber }
                height += (Double(digits) ?? 0) + 20
            }
        }
        func count(_ needle: String) -> Double { Double(body.components(separatedBy: needle).count - 1) }
        height += count("<tr") * 19 + count("<h2") * 44 + count("<h3") * 30 + count("<p class") * 22 + count("<li") * 20 + count("<table") * 14
        return Int(height)
    }

    static func fmt(_ value: Double) -> String { String(format: "%.1f", value) }

    /// Escapes text for HTML and XML alike.
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    static let css = """
        body { font: 13px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px 32px; color: #222; max-width: 1200px; }
        @media (max-width: 700px) { body { margin: 12px; } }
        p { max-width: 60em; }
        .scroll { overflow-x: auto; max-width: 100%; }
        svg.chart { max-width: 100%; height: auto; }
        h1 { font-size: 22px; margin: 0 0 6px; }
        h2 { font-size: 17px; margin: 28px 0 6px; border-bottom: 1px solid #ddd; padding-bottom: 3px; }
        h3 { font-size: 14px; margin: 16px 0 4px; }
        .meta { color: #555; margin: 4px 0; }
        .warning { background: #fdd; border: 2px solid #c00; padding: 8px; font-weight: bold; }
        .figure { overflow-x: auto; margin: 8px 0 12px; }
        svg.chart { background: #fff; }
        svg text { font: 11px "DejaVu Sans", Helvetica, Arial, sans-serif; fill: #222; }
        svg text.group { font-weight: bold; font-size: 12px; }
        svg text.axis-title { font-weight: bold; fill: #444; }
        svg text.tick { fill: #666; font-size: 10px; }
        svg text.value { fill: #333; font-size: 10px; }
        svg line.grid { stroke: #e4e4e4; stroke-width: 1; }
        svg line.whisker { stroke: #222; stroke-width: 1; opacity: 0.55; }
        svg rect.frame { fill: none; stroke: #bbb; }
        svg polyline.series { fill: none; stroke-width: 2; }
        table { border-collapse: collapse; margin: 6px 0 14px; }
        th, td { padding: 2px 8px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
        td.text { white-space: normal; min-width: 14em; }
        th { background: #f4f4f4; }
        td.num { text-align: right; font-variant-numeric: tabular-nums; }
        tr.missed td { background: #fde8e8; }
        tr.met td:nth-child(4) { color: #1d6b2a; font-weight: bold; }
        tr.missed td:nth-child(4) { color: #b00; font-weight: bold; }
        code { font-size: 12px; }
        """
}
