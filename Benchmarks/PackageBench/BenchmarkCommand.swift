import Foundation
import Glibc
import PackageCore
import PkgToolCLI

/// `pkgbench` (also `pkgtool bench`): the benchmark harness's command line.
public enum BenchmarkCommand {
    static let usage = """
        usage: pkgbench [--quick | --sweep] [options]
               pkgbench generate SHAPE DIR [--size BYTES] [--entries N] [--seed N]
               pkgbench report RESULTS.json [MORE.json…] REPORT.html

        Measures pkgtool against the peer tools (rsync, cp, xxhsum, find, zip…), side by side
        in one run, on packages generated from a seed on the work directory's file system.

        modes:
          --quick           the README's main run: a 256 MiB document package, the main
                            scenarios, hashing and a no-change diff; about a minute
          --sweep           the scaling sweeps of the one-small-edit scenario: (a) package
                            bytes 256 MiB → 1 GiB → 4 GiB, entries fixed; (b) entries
                            10,000 → 40,000 → 160,000 (CLI beside find's stat walk, and
                            the library)
          --full            the full run, the default: every shape and scenario, the
                            large-file suite, hash, manifest and zip suites (one mode
                            at most)

        options:
          --suite LIST      save, large-file, hash, manifest, zip, sweep-bytes,
                            sweep-entries, sweep (both), sync (push/pull through a local
                            SeaweedFS beside rclone and restic; only when asked for),
                            scale (10,000 → 1,000,000 small files through save, diff,
                            pack, push and pull beside cp, rsync, zip and restic: time
                            and peak RSS; only when asked for; a quick look: --suite
                            scale --scale-entries 20000)
          --shape LIST      document, small-files, huge, media (default: all but media;
                            --quick: document)
          --scenario LIST   no-change, small-edit, media-1mib, media-replaced, ten-percent,
                            everything, rename, page-add-remove, large-file (default: all
                            but large-file, which the large-file suite runs)
          --size BYTES      scale the shapes (256MiB, 4GiB, …; document keeps its entries;
                            media: its large file)
          --entries N       small files in the shapes
          --large-file-sizes L  the large media file of the large-file suite: 1 MiB
                            changed inside it (default 1GiB,4GiB; 1GiB with --quick)
          --no-xfs          the large-file suite without its second half on an XFS image
          --baseline PATH   a second pkgtool (an earlier build): every save job runs with
                            it too, on its own packages, in the same rounds
          --sweep-sizes L   package bytes of sweep (a) (default 256MiB,1GiB,4GiB)
          --sweep-entries L entries of sweep (b) (default 10000,40000,160000)
          --scale-entries L files of the scale suite's packages (default
                            10000,100000,1000000; from 1,000,000 one run, no warm-up)
          --runs N          measured runs per job after the warm-up (default 5; 3 with
                            --quick, --sweep and the scale suite alone)
          --warmups N       warm-up runs per job (default 1)
          --seed N          the generator's seed (default 1)
          --fsync LIST      pkgtool's fsync policies to measure: none, full (default both)
          --workdir DIR     where generated data lives (default .build/bench-work): it must
                            be on the file system to measure; each run uses a fresh
                            directory in it and removes it at the end
          --pkgtool PATH    the pkgtool to measure (default: beside pkgbench)
          --json FILE       every figure, the machine, seed, shapes, commands and tool
                            versions (default WORKDIR/pkgbench-MODE-results.json)
          --report FILE     the HTML report with SVG charts (default
                            WORKDIR/pkgbench-MODE-report.html; a run without sweeps also
                            draws the last sweep recorded in WORKDIR, as a separate run)
          --keep            keep the generated packages (large-file: its last pass's only,
                            for disk space)
          --quiet           no progress line nor phase messages

        """

    public static func main() -> Never {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("-h") || arguments.contains("--help") {
            print(Self.filled(usage, width: 80), terminator: "")
            exit(0)
        }
        do {
            switch arguments.first {
            case "generate":
                try generate(Array(arguments.dropFirst()))
            case "report":
                // The first record is the run drawn; later ones add the sections it lacks.
                guard arguments.count >= 3 else { throw usageError("report takes RESULTS.json [MORE.json…] and REPORT.html") }
                let records = try arguments.dropFirst().dropLast().map { path in
                    try BenchmarkRecord.decode(try Data(contentsOf: URL(fileURLWithPath: path)))
                }
                try HTMLReport.render(records[0], including: Array(records.dropFirst()))
                    .write(toFile: arguments.last!, atomically: true, encoding: .utf8)
                print(arguments.last!)
            default:
                let options = try BenchmarkOptions.parse(arguments)
                // Missed targets are reported in the table, not in the exit status: the
                // measurement itself succeeded.
                _ = try BenchmarkRunner(options: options).run()
            }
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("pkgbench: \(error.message)\n\(error.usageLine)\n".utf8))
            exit(2)
        } catch {
            FileHandle.standardError.write(Data("\npkgbench: \(error)\n".utf8))
            exit(2)
        }
        exit(0)
    }

    /// `pkgbench generate SHAPE DIR`: writes one shape, for experiments by hand.
    static func generate(_ arguments: [String]) throws {
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(arguments, spec: BenchmarkOptions.generateSpec)
        } catch {
            throw UsageError(error.message, usageLine: "usage: pkgbench generate \(BenchmarkOptions.generateSpec.arguments)")
        }
        let size = try parsed.value("size").map(BenchmarkOptions.parseBytes)
        let entries = try parsed.value("entries").map { try BenchmarkOptions.parseCount($0, option: "--entries") }
        let seed = try parsed.value("seed").map { UInt64(try BenchmarkOptions.parseCount($0, option: "--seed")) } ?? 1
        let positionals = parsed.positionals
        guard let kind = PackageShape.Kind(rawValue: positionals[0]) else {
            throw usageError("generate takes a shape (document, small-files, huge, media) and a directory")
        }
        let shape = PackageShape.make(kind, bytes: size, entries: entries, seed: seed)
        let start = Date()
        let generated = try ShapeGenerator.generate(shape, at: positionals[1])
        print(
            "\(positionals[1]): \(shape.label): \(Format.bytes(generated.totalBytes)) in \(Format.count(generated.entryCount)) entries, "
                + String(format: "%.2f s", Date().timeIntervalSince(start)))
    }
}

extension BenchmarkCommand {
    /// `text` filled to `width` columns, as pkgtool's own help is: plain paragraphs
    /// re-flowed, each option's text (a line indented by two, then lines indented under its
    /// column) re-flowed under a hanging indent; usage lines kept.
    static func filled(_ text: String, width: Int) -> String {
        var output: [String] = []
        var item: (head: String, column: Int, words: [Substring])?
        var paragraph: [Substring] = []
        func fill(_ words: [Substring], first: String, indent: Int) -> [String] {
            var lines: [String] = []
            var line = first
            var empty = true  // no word on this line yet
            for word in words {
                if !empty && line.count + 1 + word.count > width {
                    lines.append(line)
                    line = String(repeating: " ", count: indent)
                    empty = true
                }
                line += empty ? word : " " + word
                empty = false
            }
            lines.append(line)
            return lines
        }
        func flush() {
            if let current = item { output += fill(current.words, first: current.head, indent: current.column) }
            item = nil
            if !paragraph.isEmpty { output += fill(paragraph, first: "", indent: 0) }
            paragraph = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let leading = line.prefix { $0 == " " }.count
            if line.isEmpty || line.hasPrefix("usage:") || (leading > 2 && item == nil) || line.hasSuffix(":") && leading == 0 {
                flush()
                output.append(String(line))
            } else if leading == 2 {
                flush()
                // "  --option ARG   text": the text starts after the first run of two spaces.
                let body = line.dropFirst(2)
                if let gap = body.range(of: "  ") {
                    let head = String(line[..<gap.lowerBound])
                    let rest = body[gap.lowerBound...].drop { $0 == " " }
                    let column = line.distance(from: line.startIndex, to: rest.startIndex)
                    item = (head + String(repeating: " ", count: column - head.count), column, rest.split(separator: " "))
                } else {
                    output.append(String(line))
                }
            } else if leading > 2, var current = item {
                current.words += line.split(separator: " ")
                item = current
            } else {
                if item != nil { flush() }
                paragraph += line.split(separator: " ")
            }
        }
        flush()
        return output.joined(separator: "\n")
    }
}

/// A command-line mistake of pkgbench: PkgToolCLI's `UsageError`, reported with pkgbench's
/// usage line, exit status 2.
func usageError(_ message: String) -> UsageError {
    UsageError(message, usageLine: String(BenchmarkCommand.usage.prefix { $0 != "\n" }))
}

/// What a pkgbench run does, parsed from its arguments (a pure function, tested).
public struct BenchmarkOptions: Equatable, Sendable {
    public enum Mode: String, Sendable { case quick, full, sweep }

    public var mode: Mode = .full
    public var suites: [String] = []
    public var shapes: [PackageShape.Kind] = []
    public var scenarios: [Scenario] = []
    public var size: Int64?
    public var entries: Int?
    public var sweepSizes: [Int64] = [256 << 20, 1 << 30, 4 << 30]
    public var sweepEntries: [Int] = [10_000, 40_000, 160_000]
    public var scaleEntries: [Int] = [10_000, 100_000, 1_000_000]
    public var largeFileSizes: [Int64] = []
    public var xfs = true
    public var baseline: String?
    public var runs = 5
    public var warmups = 1
    public var seed: UInt64 = 1
    public var fsyncPolicies = ["none", "full"]
    public var workDirectory = ".build/bench-work"
    public var pkgtool: String?
    public var jsonPath: String?
    public var reportPath: String?
    public var keep = false
    public var quiet = false
    public var arguments: [String] = []

    public static let allSuites = [
        "save", "large-file", "hash", "manifest", "zip", "sweep-bytes", "sweep-entries", "sync", "scale",
    ]

    /// pkgbench's options, parsed by pkgtool's parser (`--name value`, `--name=value`, `--`,
    /// unknown options named with a suggestion); `usage` is their help and must list each.
    static let spec = CommandSpec(
        name: "pkgbench", summary: "measures pkgtool beside its peers", arguments: "[--quick | --sweep] [options]",
        options: [
            OptionSpec("quick", help: "the README's main run"),
            OptionSpec("sweep", help: "the scaling sweeps"),
            OptionSpec("full", help: "the full run (the default)"),
            OptionSpec("suite", .value(placeholder: "LIST"), help: "suites to run"),
            OptionSpec("shape", .value(placeholder: "LIST"), help: "package shapes"),
            OptionSpec("scenario", .value(placeholder: "LIST"), help: "edit scenarios"),
            OptionSpec("size", .value(placeholder: "BYTES"), help: "scale the shapes"),
            OptionSpec("entries", .value(placeholder: "N"), help: "small files in the shapes"),
            OptionSpec("large-file-sizes", .value(placeholder: "L"), help: "the large-file suite's file sizes"),
            OptionSpec("no-xfs", help: "no XFS image half"),
            OptionSpec("baseline", .value(placeholder: "PATH"), help: "a second pkgtool"),
            OptionSpec("sweep-sizes", .value(placeholder: "L"), help: "package bytes of sweep (a)"),
            OptionSpec("sweep-entries", .value(placeholder: "L"), help: "entries of sweep (b)"),
            OptionSpec("scale-entries", .value(placeholder: "L"), help: "files of the scale suite"),
            OptionSpec("runs", .value(placeholder: "N"), help: "measured runs per job"),
            OptionSpec("warmups", .value(placeholder: "N"), help: "warm-up runs per job"),
            OptionSpec("seed", .value(placeholder: "N"), help: "the generator's seed"),
            OptionSpec("fsync", .value(placeholder: "LIST"), help: "pkgtool's fsync policies"),
            OptionSpec("workdir", .value(placeholder: "DIR"), help: "where generated data lives"),
            OptionSpec("pkgtool", .value(placeholder: "PATH"), help: "the pkgtool to measure"),
            OptionSpec("json", .value(placeholder: "FILE"), help: "the record"),
            OptionSpec("report", .value(placeholder: "FILE"), help: "the HTML report"),
            OptionSpec("keep", help: "keep the generated packages"),
            OptionSpec("quiet", help: "no progress"),
        ],
        positionals: 0...0)

    /// `pkgbench generate SHAPE DIR`'s options.
    static let generateSpec = CommandSpec(
        name: "pkgbench generate", summary: "writes one shape", arguments: "SHAPE DIR [--size BYTES] [--entries N] [--seed N]",
        options: [
            OptionSpec("size", .value(placeholder: "BYTES"), help: "scale the shape"),
            OptionSpec("entries", .value(placeholder: "N"), help: "small files"),
            OptionSpec("seed", .value(placeholder: "N"), help: "the generator's seed"),
        ],
        positionals: 2...2)

    /// The options `arguments` ask for, defaults filled in by mode. A pure function.
    /// - Throws: `UsageError` for anything the spec or a value's check refuses.
    public static func parse(_ arguments: [String]) throws -> BenchmarkOptions {
        let parsed: ParsedArguments
        do {
            parsed = try parseArguments(arguments, spec: spec)
        } catch {
            throw usageError(error.message)
        }
        var options = BenchmarkOptions()
        options.arguments = arguments
        let modes = [("quick", Mode.quick), ("sweep", .sweep), ("full", .full)].filter { parsed.flag($0.0) }
        guard modes.count <= 1 else { throw usageError("choose one of --quick, --sweep and --full") }
        options.mode = modes.first?.1 ?? .full
        func list(_ name: String) -> [String]? { parsed.value(name).map { $0.split(separator: ",").map { String($0) } } }
        var suites: [String]?
        if let listed = list("suite") {
            suites = try listed.flatMap { suite throws(UsageError) -> [String] in
                if suite == "sweep" { return ["sweep-bytes", "sweep-entries"] }
                guard allSuites.contains(suite) else {
                    throw usageError("unknown suite '\(suite)' (\(allSuites.joined(separator: ", ")), sweep)")
                }
                return [suite]
            }
        }
        options.shapes = try (list("shape") ?? []).map { item in
            guard let kind = PackageShape.Kind(rawValue: item) else {
                throw usageError("unknown shape '\(item)' (document, small-files, huge, media)")
            }
            return kind
        }
        options.scenarios = try (list("scenario") ?? []).map { item in
            guard let scenario = Scenario(rawValue: item) else {
                throw usageError("unknown scenario '\(item)' (\(Scenario.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return scenario
        }
        options.size = try parsed.value("size").map(parseBytes)
        options.entries = try parsed.value("entries").map { try parseCount($0, option: "--entries") }
        if let sizes = list("sweep-sizes") { options.sweepSizes = try sizes.map(parseBytes) }
        if let counts = list("sweep-entries") { options.sweepEntries = try counts.map { try parseCount($0, option: "--sweep-entries") } }
        if let counts = list("scale-entries") { options.scaleEntries = try counts.map { try parseCount($0, option: "--scale-entries") } }
        if let sizes = list("large-file-sizes") { options.largeFileSizes = try sizes.map(parseBytes) }
        options.xfs = !parsed.flag("no-xfs")
        options.baseline = parsed.value("baseline")
        let runs = try parsed.value("runs").map { try parseCount($0, option: "--runs") }
        if let text = parsed.value("warmups") {
            guard let count = Int(text), count >= 0 else { throw usageError("--warmups expects a number ≥ 0, not '\(text)'") }
            options.warmups = count
        }
        if let text = parsed.value("seed") {
            guard let seed = UInt64(text) else { throw usageError("--seed expects a number, not '\(text)'") }
            options.seed = seed
        }
        if let policies = list("fsync") {
            guard !policies.isEmpty, policies.allSatisfy({ $0 == "none" || $0 == "full" }) else {
                throw usageError("--fsync expects none, full or none,full")
            }
            options.fsyncPolicies = policies
        }
        options.workDirectory = parsed.value("workdir") ?? options.workDirectory
        options.pkgtool = parsed.value("pkgtool")
        options.jsonPath = parsed.value("json")
        options.reportPath = parsed.value("report")
        options.keep = parsed.flag("keep")
        options.quiet = parsed.flag("quiet")
        return options.withDefaults(runs: runs, suites: suites)
    }

    /// What a mode measures when the options do not say.
    private func withDefaults(runs: Int?, suites: [String]?) -> BenchmarkOptions {
        var options = self
        switch options.mode {
        case .quick:
            options.runs = runs ?? 3
            options.suites = suites ?? ["save"]
            if options.shapes.isEmpty { options.shapes = [.document] }
            if options.largeFileSizes.isEmpty { options.largeFileSizes = [1 << 30] }
            if options.scenarios.isEmpty { options.scenarios = Scenario.quick }
            if options.size == nil { options.size = 256 << 20 }
        case .sweep:
            options.runs = runs ?? 3
            options.suites = suites ?? ["sweep-bytes", "sweep-entries"]
        case .full:
            options.runs = runs ?? 5
            options.suites = suites ?? ["save", "large-file", "hash", "manifest", "zip"]
        }
        // The scale suite alone: three runs below a million files (one from there on).
        if runs == nil && options.suites == ["scale"] { options.runs = 3 }
        if options.shapes.isEmpty { options.shapes = PackageShape.Kind.saveSuiteDefaults }
        if options.scenarios.isEmpty { options.scenarios = Scenario.saveSuiteDefaults }
        if options.largeFileSizes.isEmpty { options.largeFileSizes = [1 << 30, 4 << 30] }
        return options
    }

    /// "256MiB", "4GiB", "1.5G", "300M", "4096" → bytes (binary units; K/M/G/T with or without "iB").
    public static func parseBytes(_ text: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        var unit = trimmed.dropFirst(digits.count).lowercased()
        if unit.hasSuffix("ib") { unit.removeLast(2) } else if unit.hasSuffix("b") { unit.removeLast() }
        let shifts: [String: Int] = ["": 0, "k": 10, "m": 20, "g": 30, "t": 40]
        guard let number = Double(digits), let shift = shifts[unit], number > 0 else {
            throw usageError("cannot read '\(text)' as a size (try 256MiB or 4GiB)")
        }
        return Int64(number * Double(Int64(1) << shift))
    }

    static func parseCount(_ text: String, option: String) throws -> Int {
        guard let count = Int(text.replacingOccurrences(of: "_", with: "")), count > 0 else {
            throw usageError("\(option) expects a positive number, not '\(text)'")
        }
        return count
    }
}
