import Foundation

/// Repeated measurements of one job: median, minimum and maximum over the runs.
public struct Sample: Sendable {
    public var name: String
    public var costs: [ProcessCost]

    public var seconds: [Double] { costs.map(\.seconds) }
    public var median: Double { Self.median(seconds) }
    public var minimum: Double { seconds.min() ?? 0 }
    public var maximum: Double { seconds.max() ?? 0 }
    public var peakRSSBytes: Int64 { costs.map(\.peakRSSBytes).max() ?? 0 }
    public var medianBytesWritten: Int64 { Int64(Self.median(costs.map { Double($0.bytesWritten) })) }
    /// CPU time over wall time: how many cores the job kept busy.
    public var parallelism: Double {
        Self.median(costs.map { ($0.userSeconds + $0.systemSeconds) / max($0.seconds, 1e-9) })
    }

    public static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

/// What a suite of the older kind (hash, zip) hands back: its table, its named figures for
/// the record, and every job's runs for pkgbench's record and report.
public struct SuiteResult {
    public var table: Table
    public var figures: [(String, JSONNumber)]
    public var samples: [Sample] = []
}

/// Runs each job once to warm caches, then `runs` times, interleaving the jobs so that
/// drift in the machine's speed affects all of them alike.
public func measureInterleaved(
    _ jobs: [(name: String, run: () throws -> ProcessCost)], runs: Int
) throws -> [Sample] {
    for job in jobs { _ = try job.run() }
    var samples = jobs.map { Sample(name: $0.name, costs: []) }
    for _ in 0..<runs {
        for (index, job) in jobs.enumerated() {
            let cost = try job.run()
            guard cost.status == 0 else { throw BenchError("\(job.name) exited with status \(cost.status)") }
            samples[index].costs.append(cost)
        }
    }
    return samples
}

/// Formats durations, sizes and ratios for tables.
public enum Format {
    public static func seconds(_ value: Double) -> String {
        value < 0.01 ? String(format: "%.2f ms", value * 1000) : String(format: "%.3f s", value)
    }

    /// "0.120–0.180 s", "1.20–3.40 ms".
    public static func secondsRange(_ low: Double, _ high: Double) -> String {
        if high < 0.01 { return String(format: "%.2f–%.2f ms", low * 1000, high * 1000) }
        return String(format: "%.3f–%.3f s", low, high)
    }

    public static func bytes(_ value: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024 && unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(format: "%.1f %@", amount, units[unit])
    }

    /// "1.23×", with more digits for small ratios ("0.042×", "0.0031×").
    public static func ratio(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude != 0 && magnitude < 0.01 { return String(format: "%.4f×", value) }
        if magnitude != 0 && magnitude < 0.1 { return String(format: "%.3f×", value) }
        return String(format: "%.2f×", value)
    }

    /// A count with thousands separators: "20,000".
    public static func count(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var grouped = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        return (value < 0 ? "-" : "") + grouped
    }

    /// Bytes in the largest binary unit that divides them, for names: "256MiB", "4GiB", "1500KiB".
    public static func compactBytes(_ value: Int64) -> String {
        for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] where value >= Int64(1) << shift {
            if value % (Int64(1) << shift) == 0 { return "\(value >> shift)\(unit)" }
        }
        return "\(value)B"
    }
}

/// A plain-text table with aligned columns.
public struct Table {
    public var header: [String]
    public var rows: [[String]] = []

    public init(_ header: [String]) { self.header = header }

    public mutating func add(_ row: [String]) { rows.append(row) }

    public var rendered: String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == 0
                    ? cell + String(repeating: " ", count: widths[index] - cell.count)
                    : String(repeating: " ", count: widths[index] - cell.count) + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}
