import Foundation
import Glibc
import PackageCore

/// `pkgbench`: the benchmark harness's command line.
public enum BenchmarkCommand {
    static let usage = """
        usage: pkgbench [--quick] [--suite hash|manifest|zip] [--runs N] [--workdir DIR] [--pkgtool PATH]

        Measures pkgtool against the peer tools, side by side in one run, on generated data.
          --quick         the default run (a few runs of each job)
          --suite NAME    which suite to run: hash (default), manifest, zip
          --runs N        measured runs per job after one warm-up (default 5, 3 with --quick)
          --workdir DIR   where generated data lives (default: .build/bench-work); must be on
                          the file system you want to measure
          --pkgtool PATH  the pkgtool binary to measure (default: beside pkgbench)

        """

    public static func main() -> Never {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var runs = 5
        var suite = "hash"
        var workDirectory = ".build/bench-work"
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        var pkgtool = (selfPath as NSString).deletingLastPathComponent + "/pkgtool"
        while !arguments.isEmpty {
            let argument = arguments.removeFirst()
            func value() -> String {
                guard !arguments.isEmpty else { fail("option '\(argument)' needs a value") }
                return arguments.removeFirst()
            }
            switch argument {
            case "--quick": runs = 3
            case "--runs": runs = Int(value()) ?? { fail("--runs expects a number") }()
            case "--suite": suite = value()
            case "--workdir": workDirectory = value()
            case "--pkgtool": pkgtool = value()
            case "-h", "--help":
                print(usage, terminator: "")
                exit(0)
            default: fail("unknown option '\(argument)'")
            }
        }
        guard access(pkgtool, X_OK) == 0 else { fail("no pkgtool executable at '\(pkgtool)'; build it or pass --pkgtool") }
        #if DEBUG
        FileHandle.standardError.write(Data("pkgbench: warning: this is a debug build; figures are not representative\n".utf8))
        #endif
        do {
            switch suite {
            case "manifest":
                let result = try ManifestBenchmark(workDirectory: workDirectory, pkgtool: pkgtool, runs: runs).run { message in
                    FileHandle.standardError.write(Data("pkgbench: \(message)\n".utf8))
                }
                print(result.table.rendered, terminator: "")
            case "hash":
                let result = try HashBenchmark(workDirectory: workDirectory, pkgtool: pkgtool, runs: runs).run { message in
                    FileHandle.standardError.write(Data("pkgbench: \(message)\n".utf8))
                }
                print(result.table.rendered, terminator: "")
            case "zip":
                let result = try ZipBenchmark(workDirectory: workDirectory, pkgtool: pkgtool, runs: runs).run { message in
                    FileHandle.standardError.write(Data("pkgbench: \(message)\n".utf8))
                }
                print(result.table.rendered, terminator: "")
            default:
                fail("unknown suite '\(suite)'")
            }
        } catch {
            fail("\(error)")
        }
        exit(0)
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("pkgbench: \(message)\n\(usage.split(separator: "\n").first!)\n".utf8))
        exit(2)
    }
}
