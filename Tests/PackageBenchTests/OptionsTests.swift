import PkgToolCLI
import Testing

@testable import PackageBench

@Suite struct OptionsTests {
    @Test func quickDefaults() throws {
        let options = try BenchmarkOptions.parse(["--quick"])
        #expect(options.mode == .quick)
        #expect(options.runs == 3)
        #expect(options.suites == ["save"])
        #expect(options.shapes == [.document])
        #expect(options.size == 256 << 20)
        #expect(options.scenarios == Scenario.quick)
        #expect(options.fsyncPolicies == ["none", "full"])
        #expect(options.largeFileSizes == [1 << 30])
        #expect(options.xfs && options.baseline == nil)
    }

    @Test func fullRunDefaults() throws {
        let options = try BenchmarkOptions.parse([])
        #expect(options.mode == .full)
        #expect(options.runs == 5)
        #expect(options.suites == ["save", "large-file", "hash", "manifest", "zip"])
        // The media shape and its scenario belong to the large-file suite: 1 GiB and 4 GiB.
        #expect(options.shapes == [.document, .smallFiles, .huge])
        #expect(options.scenarios == Scenario.allCases.filter { $0 != .largeFile })
        #expect(options.largeFileSizes == [1 << 30, 4 << 30])
    }

    @Test func largeFileAndBaseline() throws {
        let options = try BenchmarkOptions.parse([
            "--suite", "large-file", "--large-file-sizes", "256MiB,2G", "--no-xfs", "--baseline", "/tmp/before/pkgtool",
        ])
        #expect(options.suites == ["large-file"])
        #expect(options.largeFileSizes == [256 << 20, 2 << 30])
        #expect(!options.xfs)
        #expect(options.baseline == "/tmp/before/pkgtool")
        let media = try BenchmarkOptions.parse(["--shape", "media", "--scenario", "large-file"])
        #expect(media.shapes == [.media] && media.scenarios == [.largeFile])
    }

    @Test func sweepAndLists() throws {
        let options = try BenchmarkOptions.parse([
            "--sweep", "--sweep-sizes", "64MiB,1G", "--sweep-entries=1000,4000", "--runs", "2", "--fsync", "none",
            "--seed", "7", "--workdir", "/tmp/w", "--json", "r.json", "--report=r.html", "--keep",
        ])
        #expect(options.mode == .sweep)
        #expect(options.suites == ["sweep-bytes", "sweep-entries"])
        #expect(options.sweepSizes == [64 << 20, 1 << 30])
        #expect(options.sweepEntries == [1000, 4000])
        #expect(options.runs == 2)
        #expect(options.fsyncPolicies == ["none"])
        #expect(options.seed == 7)
        #expect(options.workDirectory == "/tmp/w")
        #expect(options.jsonPath == "r.json")
        #expect(options.reportPath == "r.html")
        #expect(options.keep)
    }

    @Test func suitesShapesScenarios() throws {
        let options = try BenchmarkOptions.parse([
            "--suite", "save,sweep", "--shape", "small-files,huge", "--scenario", "rename,everything", "--entries", "500",
        ])
        #expect(options.suites == ["save", "sweep-bytes", "sweep-entries"])
        #expect(options.shapes == [.smallFiles, .huge])
        #expect(options.scenarios == [.rename, .everything])
        #expect(options.entries == 500)
    }

    @Test(arguments: [
        (["--runs"], "option '--runs' needs a value"),
        (["--runs", "0"], "--runs expects a positive number, not '0'"),
        (["--bogus"], "unknown option '--bogus' for 'pkgbench'"),
        (["--seeds", "3"], "unknown option '--seeds' for 'pkgbench'; did you mean '--seed'?"),
        (["stray"], "'pkgbench' takes 0 arguments, got 1: unexpected 'stray'"),
        (["--quick", "--sweep"], "choose one of --quick, --sweep and --full"),
        (["--keep=yes"], "option '--keep' takes no value"),
        (["--suite", "nope"], "unknown suite 'nope' (save, large-file, hash, manifest, zip, sweep-bytes, sweep-entries, sync, scale, sweep)"),
        (["--shape", "tiny"], "unknown shape 'tiny' (document, small-files, huge, media)"),
        (["--large-file-sizes", "big"], "cannot read 'big' as a size (try 256MiB or 4GiB)"),
        (["--baseline"], "option '--baseline' needs a value"),
        (["--size", "lots"], "cannot read 'lots' as a size (try 256MiB or 4GiB)"),
        (["--fsync", "sometimes"], "--fsync expects none, full or none,full"),
    ])
    func mistakes(arguments: [String], message: String) {
        let error = #expect(throws: UsageError.self) { try BenchmarkOptions.parse(arguments) }
        #expect(error?.message == message)
        #expect(error?.usageLine == "usage: pkgbench [--quick | --sweep] [options]")
    }

    @Test func theParserTakesWhatTheCLIsTakes() throws {
        let options = try BenchmarkOptions.parse(["--runs=2", "--seed", "18446744073709551615", "--quick", "--", ])
        #expect(options.runs == 2 && options.seed == .max && options.mode == .quick)
    }

    @Test func theHelpNamesEveryOption() {
        for option in BenchmarkOptions.spec.options where option.long != "help" {
            #expect(BenchmarkCommand.usage.contains("--\(option.long)"), "\(option.long)")
        }
        for option in BenchmarkOptions.generateSpec.options where option.long != "help" {
            #expect(BenchmarkCommand.usage.contains("--\(option.long)"), "\(option.long)")
        }
    }

    @Test func sizes() throws {
        #expect(try BenchmarkOptions.parseBytes("256MiB") == 256 << 20)
        #expect(try BenchmarkOptions.parseBytes("4GiB") == 4 << 30)
        #expect(try BenchmarkOptions.parseBytes("4G") == 4 << 30)
        #expect(try BenchmarkOptions.parseBytes("1.5g") == 3 << 29)
        #expect(try BenchmarkOptions.parseBytes("300M") == 300 << 20)
        #expect(try BenchmarkOptions.parseBytes("64kb") == 64 << 10)
        #expect(try BenchmarkOptions.parseBytes("4096") == 4096)
        #expect(throws: UsageError.self) { try BenchmarkOptions.parseBytes("0") }
        #expect(throws: UsageError.self) { try BenchmarkOptions.parseBytes("12 parsecs") }
    }

    @Test func formats() {
        #expect(Format.count(20_000) == "20,000")
        #expect(Format.count(999) == "999")
        #expect(Format.count(-1234567) == "-1,234,567")
        #expect(Format.compactBytes(256 << 20) == "256MiB")
        #expect(Format.compactBytes(4 << 30) == "4GiB")
        #expect(Format.compactBytes(1536 << 20) == "1536MiB")
        #expect(Format.compactBytes(1000) == "1000B")
        #expect(Format.ratio(1.5) == "1.50×")
        #expect(Format.ratio(0.042) == "0.042×")
        #expect(Format.ratio(0.0031) == "0.0031×")
        #expect(Format.secondsRange(0.12, 0.18) == "0.120–0.180 s")
    }

    @Test func commandQuoting() {
        #expect(shellQuoted(["rsync", "-a", "/a b/", "it's"]) == "rsync -a '/a b/' 'it'\\''s'")
        #expect(shellQuoted(["find", "x", "-printf", "%s %T@\n"]) == "find x -printf '%s %T@\n'")
    }

    /// `pkgbench --help` (and `pkgtool bench --help`) fits 80 columns like pkgtool's own
    /// help, and says everything the table says.
    @Test func helpFitsEightyColumns() {
        let filled = BenchmarkCommand.filled(BenchmarkCommand.usage, width: 80)
        for line in filled.split(separator: "\n") { #expect(line.count <= 80, "\(line)") }
        let words = { (text: String) in text.split(whereSeparator: { $0 == " " || $0 == "\n" }) }
        #expect(words(filled) == words(BenchmarkCommand.usage))
    }
}
