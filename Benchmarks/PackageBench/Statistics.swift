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

    public static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
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
