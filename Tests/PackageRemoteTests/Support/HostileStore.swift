import Foundation
import Glibc
import PackageTestSupport

@testable import PackageRemote

/// A hostile S3 endpoint on 127.0.0.1 (`Tests/HostileStore/hostile_s3.py`, Python's
/// `http.server`): a proxy to the shared SeaweedFS that tampers with requests (drops the
/// conditional headers, overwrites HEAD after a push, trickles or prolongs bodies), signing
/// them again, or a server of crafted answers. Its modes are listed in the script.
final class HostileStore {
    /// python3 on PATH; tests that need the endpoint are skipped, visibly, without it.
    static let python: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/python3" }.first { access($0, X_OK) == 0 }
    }()
    static var isAvailable: Bool { python != nil }

    static let script = SeaweedServer.repositoryRoot + "/Tests/HostileStore/hostile_s3.py"

    let process = Process()
    let port: Int
    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// A proxy to `server` in `mode`.
    convenience init(proxying server: SeaweedServer, mode: String) throws {
        try self.init(
            arguments: [mode, server.endpoint, SeaweedServer.accessKey, SeaweedServer.secretKey, "us-east-1"])
    }

    /// A server of crafted answers in `mode`.
    convenience init(crafted mode: String) throws {
        try self.init(arguments: [mode])
    }

    private init(arguments: [String]) throws {
        guard let python = Self.python else { throw SeaweedError("python3 is not installed") }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Self.script] + arguments
        process.standardOutput = output
        try process.run()
        var line: [UInt8] = []
        let handle = output.fileHandleForReading
        while let byte = try handle.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            kill(process.processIdentifier, SIGKILL)
            throw SeaweedError("the hostile store did not start: '\(String(decoding: line, as: UTF8.self))'")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: the child may inherit a mask that blocks SIGTERM from the test's thread.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// A configuration reaching this endpoint with the test server's credentials.
    func configuration(attempts: Int = 1) -> S3Configuration {
        var configuration = S3Configuration(
            endpoint: endpoint, pathStyle: true, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: SeaweedServer.accessKey, secretAccessKey: SeaweedServer.secretKey))
        configuration.transport.attempts = attempts
        configuration.transport.retryDelay = 0.05
        configuration.transport.connectTimeoutMilliseconds = 2000
        return configuration
    }
}
