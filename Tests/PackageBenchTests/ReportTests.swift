import Foundation
import Testing

@testable import PackageBench

/// The HTML report draws what the JSON record holds: every bar and point carries its
/// measurement's median, is placed on the chart's scale, and is labelled with the number.
@Suite struct ReportTests {
    /// One element of the page: its name, attributes and (for text) its content.
    struct Element {
        var name: String
        var attributes: [String: String]
        var text: String
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// Every `<name …>` element of `html` (with the text up to its next tag).
    static func elements(_ name: String, in html: String) -> [Element] {
        var found: [Element] = []
        var rest = html[...]
        while let start = rest.range(of: "<" + name + " ") {
            guard let end = rest[start.upperBound...].firstIndex(of: ">") else { break }
            let inside = rest[start.upperBound..<end]
            var attributes: [String: String] = [:]
            var cursor = inside[...]
            while let equals = cursor.range(of: "=\"") {
                let key = cursor[..<equals.lowerBound].split(separator: " ").last.map(String.init) ?? ""
                guard let close = cursor[equals.upperBound...].firstIndex(of: "\"") else { break }
                attributes[key] = unescape(String(cursor[equals.upperBound..<close]))
                cursor = cursor[cursor.index(after: close)...]
            }
            let after = rest[rest.index(after: end)...]
            let text = after.prefix { $0 != "<" }
            found.append(Element(name: name, attributes: attributes, text: unescape(String(text))))
            rest = after
        }
        return found
    }

    static func rendered() throws -> (BenchmarkRecord, String) {
        // Through the JSON, as `pkgbench report` does.
        let record = try BenchmarkRecord.decode(try RecordFixture.make().encoded())
        return (record, HTMLReport.render(record))
    }

    @Test func jsonRoundTripsWithSnakeCaseKeys() throws {
        let record = RecordFixture.make()
        let data = try record.encoded()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"bytes_written\""))
        #expect(text.contains("\"ratio_to_full\""))
        #expect(text.contains("\"duration_seconds\""))
        let back = try BenchmarkRecord.decode(data)
        #expect(back.measurements.count == record.measurements.count)
        #expect(back.measurements.map(\.seconds) == record.measurements.map(\.seconds))
        #expect(back.shapes[0].edits == record.shapes[0].edits)
        #expect(back.seed == 1 && back.machine.filesystem == "ext4")
    }

    @Test func everyBarIsAMeasurementMedian() throws {
        let (record, html) = try Self.rendered()
        let byID = Dictionary(record.measurements.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let bars = Self.elements("rect", in: html).filter { $0.attributes["class"] == "bar" }
        let barred = record.measurements.filter { !$0.suite.hasPrefix("sweep") }
        // save rows have a time and a bytes bar; the others a time bar.
        let expected = barred.reduce(0) { $0 + ($1.suite == "save" ? 2 : 1) }
        #expect(bars.count == expected)
        for bar in bars {
            let id = try #require(bar.attributes["data-id"])
            let measurement = try #require(byID[id], "bar for an unknown measurement \(id)")
            let value = try #require(Double(bar.attributes["data-value"] ?? ""))
            switch bar.attributes["data-metric"] {
            case "seconds": #expect(value == measurement.seconds.median)
            case "bytes_written": #expect(value == measurement.bytesWritten.median)
            default: Issue.record("bar with metric \(bar.attributes["data-metric"] ?? "none")")
            }
        }
        // The labels print the same numbers.
        let labels = Self.elements("text", in: html).filter { $0.attributes["class"] == "value" }
        #expect(labels.count == bars.count)
        for label in labels {
            let measurement = try #require(byID[label.attributes["data-id"] ?? ""])
            let expected = label.attributes["data-metric"] == "seconds"
                ? Format.seconds(measurement.seconds.median) : Format.bytes(Int64(measurement.bytesWritten.median))
            #expect(label.text == expected)
        }
    }

    /// Within a chart panel, a bar's length is its value on the panel's log scale.
    @Test func barsAreOnTheirScale() throws {
        let (_, html) = try Self.rendered()
        var checked = 0
        for chart in html.components(separatedBy: "<svg ").dropFirst() {
            for panel in chart.components(separatedBy: "<g class=\"panel\"").dropFirst() {
                let head = Self.elements("g", in: "<g class=\"panel\"" + panel).first
                guard let low = Double(head?.attributes["data-low"] ?? ""), let high = Double(head?.attributes["data-high"] ?? ""),
                    let left = Double(head?.attributes["data-left"] ?? ""), let span = Double(head?.attributes["data-width"] ?? "")
                else { continue }
                for bar in Self.elements("rect", in: panel) where bar.attributes["class"] == "bar" {
                    let value = Double(bar.attributes["data-value"]!)!
                    let width = Double(bar.attributes["width"]!)!
                    #expect(bar.attributes["x"] == head?.attributes["data-left"])
                    _ = left
                    if value <= low {
                        #expect(width == 0 || value > 0)
                    } else {
                        let expected = max((log10(value) - log10(low)) / (log10(high) - log10(low)) * span, 1.5)
                        #expect(abs(width - expected) <= 0.06, "bar of \(value) is \(width) wide, not \(expected)")
                    }
                    #expect(value <= high)
                    checked += 1
                }
            }
        }
        #expect(checked > 50)
    }

    @Test func sweepPointsFollowTheirValues() throws {
        let (record, html) = try Self.rendered()
        let points = Self.elements("circle", in: html).filter { $0.attributes["class"] == "point" }
        let sweeps = record.measurements.filter { $0.suite.hasPrefix("sweep") }
        // One point per measurement and metric, but for zeros (no place on a log scale).
        let nonZero = sweeps.reduce(0) { $0 + ($1.seconds.median > 0 ? 1 : 0) + ($1.bytesWritten.median > 0 ? 1 : 0) }
        #expect(points.count == nonZero)
        #expect(nonZero < sweeps.count * 2)
        let byID = Dictionary(sweeps.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var heights: [String: [(Double, Double)]] = [:]
        for point in points {
            let measurement = try #require(byID[point.attributes["data-id"] ?? ""])
            let metric = point.attributes["data-metric"]!
            let value = Double(point.attributes["data-value"]!)!
            #expect(value == (metric == "seconds" ? measurement.seconds.median : measurement.bytesWritten.median))
            heights[measurement.suite + metric, default: []].append((value, Double(point.attributes["cy"]!)!))
        }
        // Higher values are drawn higher up (smaller y), on every panel.
        for (_, pairs) in heights {
            for a in pairs {
                for b in pairs where a.0 < b.0 { #expect(a.1 >= b.1) }
            }
        }
        // One line per job and policy and panel (find writes nothing: no bytes line).
        let lines = Self.elements("polyline", in: html)
        #expect(lines.count == 2 * (3 + 3) - 1)
    }

    @Test func checksAndNotesAreShown() throws {
        let (record, html) = try Self.rendered()
        #expect(!record.checks.isEmpty)
        for check in record.checks {
            #expect(html.contains(HTMLReport.escape(check.name)))
        }
        let rows = html.components(separatedBy: "<tr class=\"").count - 1
        #expect(rows == record.checks.count)
        #expect(html.contains("a note with &lt;markup&gt; &amp; &quot;quotes&quot;"))
        #expect(html.contains("rsync -a --delete --stats SRC/ COPY/"))
    }

    /// A quick run's page draws a separate sweep run's lines, saying where they come from.
    @Test func includesASeparateSweep() throws {
        var quick = RecordFixture.make()
        quick.measurements.removeAll { $0.suite.hasPrefix("sweep") }
        var sweep = RecordFixture.make()
        sweep.pkgbench.mode = "sweep"
        sweep.pkgbench.started = "2026-12-01 13:37:38 UTC"
        sweep.measurements.removeAll { !$0.suite.hasPrefix("sweep") }
        sweep.checks = Checks.evaluate(sweep)
        let alone = HTMLReport.render(quick)
        #expect(Self.elements("circle", in: alone).isEmpty)
        let html = HTMLReport.render(quick, including: [sweep])
        let points = Self.elements("circle", in: html).filter { $0.attributes["class"] == "point" }
        let ids = Set(sweep.measurements.map(\.id))
        #expect(!points.isEmpty)
        #expect(points.allSatisfy { ids.contains($0.attributes["data-id"] ?? "") })
        let notes = Self.elements("p", in: html).filter { $0.attributes["class"] == "meta included" }
        #expect(notes.map { $0.attributes["data-suite"] ?? "" } == ["sweep-bytes", "sweep-entries"])
        #expect(notes.allSatisfy { $0.text.contains("From a separate sweep run, 2026-12-01 13:37:38 UTC") })
        // The sweep's own targets come along, beside the quick run's.
        for check in sweep.checks { #expect(html.contains(HTMLReport.escape(check.name))) }
    }

    /// One self-contained page: no script, nothing fetched from the network.
    @Test func selfContained() throws {
        let (_, html) = try Self.rendered()
        #expect(!html.contains("<script"))
        #expect(!html.contains("src="))
        #expect(!html.contains("<link"))
        let addresses = html.components(separatedBy: "http").dropFirst().map { String($0.prefix(30)) }
        #expect(addresses.allSatisfy { $0.hasPrefix("://www.w3.org/") })
        // Well formed: every element opened is closed, in order.
        var stack: [String] = []
        var rest = html[...]
        while let open = rest.firstIndex(of: "<") {
            guard let close = rest[open...].firstIndex(of: ">") else { Issue.record("unclosed tag"); break }
            let tag = rest[rest.index(after: open)..<close]
            rest = rest[rest.index(after: close)...]
            if tag.hasPrefix("!") || tag.hasSuffix("/") { continue }
            let name = String(tag.split(separator: " ").first ?? "")
            if name.hasPrefix("/") {
                #expect(stack.popLast() == String(name.dropFirst()), "</\(name.dropFirst())> closes something else")
            } else if name != "meta" {
                stack.append(name)
            }
        }
        #expect(stack.isEmpty)
    }

    /// The page opens with its conclusion for a reader choosing a strategy, says what a goal
    /// not met means, cites nothing a reader lacks, and lets wide tables scroll inside the
    /// page instead of widening it (checked in headless Chromium at 1280 px and 390 px).
    @Test func thePageOpensWithItsConclusionAndCitesNothingInternal() throws {
        let (record, html) = try Self.rendered()
        let advice = try #require(html.range(of: "<h2>Which strategy to use</h2>"))
        let goals = try #require(html.range(of: "<h2>How this run compares with pkgtool's goals</h2>"))
        #expect(advice.lowerBound < goals.lowerBound)
        #expect(html.range(of: "<h2>", options: [])?.lowerBound == advice.lowerBound, "the advice is the first section")
        for strategy in ["journaled</strong> (the default)", "atomic</strong>", "full</strong>"] { #expect(html.contains(strategy)) }
        #expect(html.contains("never that a result was wrong"))
        #expect(!html.contains("MISSED") && html.contains("not met") == record.checks.contains { !$0.met })
        #expect(html.range(of: #"issue \d"#, options: .regularExpression) == nil)
        #expect(!html.contains("baselines.md") && !html.contains("design/"))
        #expect(html.components(separatedBy: "<table").count - 1 == html.components(separatedBy: "<div class=\"scroll\"><table").count - 1)
    }

    @Test func textTableShowsTheFigures() throws {
        let record = RecordFixture.make()
        let text = TextReport.render(record)
        #expect(text.contains("save: document-256MiB"))
        #expect(text.contains("pkgtool save journaled"))
        #expect(text.contains("sweep (a)"))
        #expect(text.contains("not met") == record.checks.contains { !$0.met })
        #expect(text.contains("which strategy: journaled (the default)"))
    }
}
