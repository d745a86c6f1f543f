import Foundation
import Glibc

/// What one child process cost, measured from outside it (wait4's rusage).
public struct ProcessCost: Sendable {
    public var status: Int32
    public var seconds: Double
    public var userSeconds: Double
    public var systemSeconds: Double
    /// Peak resident set size.
    public var peakRSSBytes: Int64
    /// Bytes the process caused to be written to storage (ru_oublock × 512, the
    /// kernel's write_bytes accounting: counted when pages are dirtied, fsync or not).
    public var bytesWritten: Int64
    public var bytesRead: Int64
    public var standardOutput: String
}

public enum Spawn {
    /// The measuring launcher, beside the pkgbench executable.
    public static let measureTool: String = {
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (selfPath as NSString).deletingLastPathComponent + "/pkgbench-measure"
    }()

    /// Runs `executable` with `arguments` through `pkgbench-measure`, with standard output
    /// captured (or discarded) and standard error kept aside (shown only on failure), and
    /// returns its cost.
    public static func run(_ executable: String, _ arguments: [String], captureOutput: Bool = false) throws
        -> ProcessCost
    {
        let resultFile = NSTemporaryDirectory() + "/pkgbench-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).cost"
        let errorFile = resultFile + ".stderr"
        defer {
            unlink(resultFile)
            unlink(errorFile)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var pipeEnds: [Int32] = [-1, -1]
        if captureOutput {
            guard pipe(&pipeEnds) == 0 else { throw BenchError("pipe failed: \(String(cString: strerror(errno)))") }
            posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
            posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([measureTool, resultFile, executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, measureTool, &actions, nil, argv, environ)
        guard spawned == 0 else { throw BenchError("cannot run \(measureTool): \(String(cString: strerror(spawned)))") }
        var output = [UInt8]()
        if captureOutput {
            close(pipeEnds[1])
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(pipeEnds[0], &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                output.append(contentsOf: buffer[..<count])
            }
            close(pipeEnds[0])
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard let line = try? String(contentsOfFile: resultFile, encoding: .utf8) else {
            throw BenchError("pkgbench-measure did not report on \(executable)")
        }
        let fields = line.split(separator: " ").map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) }
        guard fields.count == 7, let code = Int32(fields[0]) else { throw BenchError("unreadable measurement '\(line)'") }
        if code != 0 {
            let errors = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
            let last = errors.split(separator: "\n").last.map(String.init) ?? ""
            throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited with status \(code): \(last)")
        }
        return ProcessCost(
            status: code, seconds: Double(fields[1]) ?? 0, userSeconds: Double(fields[2]) ?? 0,
            systemSeconds: Double(fields[3]) ?? 0, peakRSSBytes: (Int64(fields[4]) ?? 0) * 1024,
            bytesWritten: Int64(fields[5]) ?? 0, bytesRead: Int64(fields[6]) ?? 0,
            standardOutput: String(decoding: output, as: UTF8.self))
    }

    /// The first line a command prints for `--version` (or `-V`, `-h`), for the record.
    public static func version(of executable: String, flag: String = "--version") -> String {
        guard let cost = try? run(executable, [flag], captureOutput: true) else { return "unknown" }
        return cost.standardOutput.split(separator: "\n").first.map(String.init) ?? "unknown"
    }

    /// Runs a helper (mkfs, mount) directly, not measured: its exit status and what it
    /// printed on stdout and stderr.
    static func plain(_ executable: String, _ arguments: [String]) -> (status: Int32, output: String, lastLine: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (127, "", "cannot run \(executable): \(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        let last = output.split(separator: "\n").last.map(String.init) ?? "exit status \(process.terminationStatus)"
        return (process.terminationStatus, output, last)
    }

    /// The full path of a program on PATH, or nil.
    public static func which(_ program: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where access("\(directory)/\(program)", X_OK) == 0 {
            return "\(directory)/\(program)"
        }
        return nil
    }
}

public struct BenchError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
