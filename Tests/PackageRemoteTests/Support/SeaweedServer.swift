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
        ports = try Self.freePorts(4)
        s3Port = ports[3]
        let identities = """
            {"identities":[{"name":"pkgtool-test","credentials":[{"accessKey":"\(Self.accessKey)",\
            "secretKey":"\(Self.secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        try identities.write(toFile: directory + "/s3.json", atomically: true, encoding: .utf8)
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
        let weed = try Self.weedPath()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        let pidFile = directory + "/weed.pid"
        unlink(pidFile)
        process.arguments = [
            Self.repositoryRoot + "/Scripts/seaweedfs", "serve", String(getpid()), pidFile, "--",
            "server", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.port=\(ports[0])", "-volume.port=\(ports[1])", "-filer.port=\(ports[2])",
            "-master.port.grpc=\(ports[0] + 10000)", "-volume.port.grpc=\(ports[1] + 10000)",
            "-filer.port.grpc=\(ports[2] + 10000)", "-s3", "-s3.port=\(s3Port)", "-s3.port.grpc=\(s3Port + 10000)",
            "-s3.config=\(directory)/s3.json", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
            "-volume.max=0", "-master.volumeSizeLimitMB=64",
        ]
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

    /// The weed executable: `PKGTOOL_WEED`, or `.build/seaweedfs` (installed when missing).
    static func weedPath() throws -> String {
        if let given = ProcessInfo.processInfo.environment["PKGTOOL_WEED"], access(given, X_OK) == 0 { return given }
        let script = repositoryRoot + "/Scripts/seaweedfs"
        let result = try runProgram("/bin/bash", [script, "install"])
        let path = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard result.status == 0, access(path, X_OK) == 0 else {
            throw SeaweedError("Scripts/seaweedfs install failed (status \(result.status)): \(result.error)")
        }
        return path
    }

    static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// `count` ports p such that p and p + 10000 (weed's gRPC ports) are both free.
    static func freePorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        var tries = 0
        while ports.count < count {
            tries += 1
            if tries > 2000 { throw SeaweedError("no free ports found") }
            let candidate = Int.random(in: 20000...30000)
            if ports.contains(candidate) { continue }
            if portIsFree(candidate) && portIsFree(candidate + 10000) { ports.append(candidate) }
        }
        return ports
    }

    private static func portIsFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

struct SeaweedError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
