import Foundation
import Glibc

/// Runs the built `pkgtool` as its own process, with the environment of a device that
/// reaches `server` (its own cache directory), and returns status, output and errors.
struct PkgtoolProcess {
    var server: SeaweedServer
    var cacheDirectory: String
    var extraEnvironment: [String: String] = [:]

    static let executable: String = {
        let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        var directory = (runner as NSString).deletingLastPathComponent
        for _ in 0..<4 {
            let candidate = directory + "/pkgtool"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return "pkgtool"
    }()

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in ["AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL_S3", "AWS_CA_BUNDLE"] {
            environment[name] = nil
        }
        environment.merge(server.environment) { $1 }
        environment["PKGTOOL_CACHE_DIR"] = cacheDirectory
        environment.merge(extraEnvironment) { $1 }
        return environment
    }

    /// Starts pkgtool; `wait()` on the result collects it.
    func start(_ arguments: [String]) throws -> Running {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        return Running(process: process, output: output, errors: errors)
    }

    @discardableResult
    func run(_ arguments: String...) throws -> (status: Int32, output: String, errors: String) {
        try start(arguments).wait()
    }

    func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        try start(arguments).wait()
    }

    struct Running {
        let process: Process
        let output: Pipe
        let errors: Pipe

        func wait() -> (status: Int32, output: String, errors: String) {
            let errorData = ErrorCollector(errors.fileHandleForReading)
            let outputData = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (
                process.terminationStatus, String(decoding: outputData, as: UTF8.self),
                String(decoding: errorData.finish(), as: UTF8.self)
            )
        }
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class ErrorCollector: @unchecked Sendable {
    // @unchecked: `data` is written once by the reading thread before `done` is signalled.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    func finish() -> Data {
        done.wait()
        return data
    }
}
