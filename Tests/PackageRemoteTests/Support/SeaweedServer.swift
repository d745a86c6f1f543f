import Foundation
import Glibc
import PackageCore
import PackageTestSupport
@testable import PackageRemote
import Synchronization

/// A real SeaweedFS (`weed server -s3`) on 127.0.0.1, with an identity configuration so that
/// every request must be signed (anonymous ones are refused), started once per test run and
/// shared by the suites (each test uses its own bucket).
///
/// `Scripts/seaweedfs install` puts weed in `.build/seaweedfs` (the test command runs it; the
/// first test runs it when it was not). weed runs under `Scripts/seaweedfs serve`, which stops
/// it when this process exits, however it exits.
final class SeaweedServer: @unchecked Sendable {
    // @unchecked: the mutable state (the running process) is guarded by `lock`.
    static let accessKey = "pkgtool-test-access"
    static let secretKey = "pkgtool-test-secret-0123456789"

    let directory: String
    let s3Port: Int
    private let ports: [Int]
    private let lock = NSLock()
    private var wrapper: Process?
    private var weedPid: pid_t = 0

    /// The server every test shares, started on first use.
    static let shared: SeaweedServer = {
        do {
            return try SeaweedServer()
        } catch {
            fatalError("cannot start SeaweedFS for the sync tests: \(error)")
        }
    }()

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/pkgtool-seaweedfs-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw Errno(rawValue: errno) }
        directory = String(cString: created)
        ports = try SeaweedLaunch.freePorts(4)
        s3Port = ports[3]
        try SeaweedLaunch.writeIdentities(
            name: "pkgtool-test", accessKey: Self.accessKey, secretKey: Self.secretKey, in: directory)
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try start()
    }

    deinit { stop() }

    var endpoint: String { "http://127.0.0.1:\(s3Port)" }

    /// The environment a pkgtool process needs to reach this server.
    var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": Self.accessKey, "AWS_SECRET_ACCESS_KEY": Self.secretKey, "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
        ]
    }

    /// Retries enough to ride out a slow moment of a loaded machine (a 500 while the server
    /// catches up), quickly.
    func configuration(attempts: Int = 6) -> S3Configuration {
        var configuration = S3Configuration(
            endpoint: endpoint, pathStyle: true, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: Self.accessKey, secretAccessKey: Self.secretKey))
        configuration.transport.attempts = attempts
        configuration.transport.retryDelay = 0.1
        configuration.transport.connectTimeoutMilliseconds = 2000
        return configuration
    }

    /// A fresh bucket for one test.
    func makeBucket(_ label: String = "test") throws -> String {
        let name = "\(label)-\(UInt32.random(in: 0...UInt32.max))"
        let connection = S3Connection(configuration: configuration(), counters: TransferCounters(), cancellation: nil)
        try connection.createBucket(name)
        return name
    }

    // MARK: Process control

    /// Starts weed and waits until its S3 gateway answers a signed request.
    func start() throws {
        let weed = try SeaweedLaunch.weedExecutable(script: Self.repositoryRoot + "/Scripts/seaweedfs")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let pidFile = directory + "/weed.pid"
        unlink(pidFile)
        process.arguments =
            [Self.repositoryRoot + "/Scripts/seaweedfs", "serve", String(getpid()), pidFile, "--"]
            + SeaweedLaunch.serverArguments(directory: directory, ports: ports, volumeSizeLimitMB: 64)
        var environment = ProcessInfo.processInfo.environment
        environment["PKGTOOL_WEED"] = weed
        environment["PKGTOOL_SEAWEEDFS_REMOVE"] = directory
        process.environment = environment
        let log = FileHandle(forWritingAtPath: directory + "/weed.log") ?? {
            _ = FileManager.default.createFile(atPath: directory + "/weed.log", contents: nil)
            return FileHandle(forWritingAtPath: directory + "/weed.log")!
        }()
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        lock.withLock { wrapper = process }
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            if weedPid == 0, let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                lock.withLock { weedPid = pid }
            }
            let connection = S3Connection(configuration: configuration(attempts: 1), counters: TransferCounters(), cancellation: nil)
            // Ready when a bucket, an object write and its read all work (after a restart the
            // gateway answers before the filer and volume servers are back).
            if weedPid != 0, (try? connection.createBucket("readiness-probe")) != nil,
                (try? connection.put(bucket: "readiness-probe", key: "probe", bytes: [1])) != nil,
                (try? connection.getObject(bucket: "readiness-probe", key: "probe", limit: 10))??.bytes == [1]
            {
                return
            }
            guard process.isRunning else { break }
            usleep(200_000)
        }
        let tail = (try? String(contentsOfFile: directory + "/weed.log", encoding: .utf8))?.suffix(2000) ?? ""
        throw SeaweedError("SeaweedFS did not come up on port \(s3Port) within 90 s; log tail: \(tail)")
    }

    /// Kills weed outright (SIGKILL): a server that crashes mid-transfer.
    func kill() {
        let (pid, process) = lock.withLock { (weedPid, wrapper) }
        if pid != 0 { Glibc.kill(pid, SIGKILL) }
        process?.waitUntilExit()
        lock.withLock {
            weedPid = 0
            wrapper = nil
        }
    }

    /// Stops weed the polite way (the wrapper's SIGTERM, then SIGKILL after 3 s).
    func stop() {
        let process = lock.withLock { wrapper }
        guard let process else { return }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        lock.withLock {
            weedPid = 0
            wrapper = nil
        }
    }

    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()
}

struct SeaweedError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
