import Foundation

/// The report's opening for a reader choosing how to save: which strategy, why, and what it
/// cost in this run, against rsync, before any table.
enum StrategyAdvice {
    /// One job's figures in one scenario: median time and bytes written.
    struct Figure {
        var seconds: Double
        var bytes: Double
        var shown: String { "\(Format.seconds(seconds)), writing \(Format.bytes(Int64(bytes)))" }
    }

    /// The figures the advice quotes, from the first shape saved, with pkgtool's default
    /// durability when it was measured (fsync full), else without.
    struct Figures {
        var shape: String
        var fsync: String
        var scenario: String
        var strategies: [String: Figure] = [:]
        var rsync: Figure?
    }

    static func figures(_ record: BenchmarkRecord) -> Figures? {
        let save = record.measurements(suite: "save")
        guard let shape = TextReport.unique(save.compactMap(\.shape)).first else { return nil }
        let rows = save.filter { $0.shape == shape }
        let scenarios: [String] = ["small-edit", "media-1mib"]
        guard let chosen: String = scenarios.first(where: { name in rows.contains { $0.scenario == name } }) else { return nil }
        let inScenario = rows.filter { $0.scenario == chosen }
        let fsync = inScenario.contains { $0.tool == "pkgtool" && $0.fsync == "full" } ? "full" : "none"
        let label = record.shapes.first { $0.slug == shape }?.label ?? shape
        var figures = Figures(shape: label, fsync: fsync, scenario: chosen)
        for m in inScenario {
            let figure = Figure(seconds: m.seconds.median, bytes: m.bytesWritten.median)
            if m.tool == "pkgtool", m.fsync == fsync, let strategy = m.strategy {
                figures.strategies[strategy] = figure
            } else if m.tool == "rsync", m.strategy == nil {
                figures.rsync = figure
            }
        }
        return figures.strategies.isEmpty ? nil : figures
    }

    /// The advice as HTML paragraphs (the figures this run has, each strategy's guarantee always).
    static func html(_ record: BenchmarkRecord) -> String {
        let figures = figures(record)
        func cost(_ strategy: String) -> String {
            guard let figures, let figure = figures.strategies[strategy] else { return "" }
            var text = " In this run: \(figure.shown)"
            if strategy != "journaled", let journaled = figures.strategies["journaled"], journaled.seconds > 0 {
                text += " (\(Format.ratio(figure.seconds / journaled.seconds)) journaled's time)"
            } else if let rsync = figures.rsync, rsync.seconds > 0 {
                text += "; rsync -a took \(rsync.shown), so journaled took \(Format.ratio(figure.seconds / rsync.seconds)) rsync's time"
            }
            return HTMLReport.escape(text + ".")
        }
        var html = "<h2>Which strategy to use</h2>\n"
        if let figures {
            let scenario = figures.scenario == "small-edit" ? "a small edit (one page and metadata.json)" : "1 MiB changed inside a media file"
            html += "<p class=\"meta\">Figures: \(HTMLReport.escape(scenario)) in the \(HTMLReport.escape(figures.shape)) package, pkgtool with fsync \(figures.fsync)\(figures.fsync == "full" ? " (the default: durable when the command returns)" : ""); rsync never fsyncs.</p>\n"
        }
        html += "<p><strong>journaled</strong> (the default) for a document saved where it lives. Only the changed files, or the changed chunks of a large one, are written; a crash at any moment leaves the old or the new version (the next command finishes or undoes the save). A program reading the package during the save may see some files new and others old.\(cost("journaled"))</p>\n"
        html += "<p><strong>atomic</strong> when other programs read the package while it is saved: the new version is built beside it from hard links and the changed files, and swapped in one step, so readers see the whole old or the whole new version. It costs more than journaled for each save (a link per file and a swap), and needs a file system with hard links.\(cost("atomic")) With <code>--keep-previous</code> the replaced version stays beside the package and the next save brings it up to date instead of building a new tree — faster, at the price of the old version's own files kept on disk.\(cost("atomic-keep"))</p>\n"
        html += "<p><strong>full</strong> writes the whole package again: what every strategy does on a first save, and the yardstick the others are measured by; choose it only where hard links and in-place writes are not wanted.\(cost("full"))</p>\n"
        return html
    }
}
