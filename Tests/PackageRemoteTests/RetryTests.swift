import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// Retries, backoff and resumed downloads against a server that misbehaves on purpose: a
/// small HTTP server (Python's `http.server`) that answers each request as its plan says —
/// S3's `503 SlowDown`, `500 InternalError`, or the object with its connection cut a third of
/// the way through — and serves the object, honouring `Range`, once the plan is used up.
/// libcurl really talks HTTP to it: only the store's behaviour is staged, not the transport.
@Suite("Retries against a misbehaving server") struct RetryTests {
    /// The object it serves: 1 MiB of a repeating byte ramp.
    static let object: [UInt8] = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }

    static let script = """
        import http.server, socket, sys
        plan = sys.argv[1].split(",") if sys.argv[1] else []
        log_path = sys.argv[2]
        body = bytes((i * 7) & 0xFF for i in range(1 << 20))
        count = 0
        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *arguments):
                pass
            def error(self, status, code):
                text = ("<Error><Code>%s</Code><Message>staged</Message></Error>" % code).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                self.wfile.write(text)
            def do_GET(self):
                global count
                action = plan[count] if count < len(plan) else "ok"
                count += 1
                with open(log_path, "a") as log:
                    log.write("%s %s\\n" % (action, self.headers.get("Range", "-")))
                if action == "slowdown":
                    return self.error(503, "SlowDown")
                if action == "internal":
                    return self.error(500, "InternalError")
                start = 0
                ranged = self.headers.get("Range")
                if ranged:
                    start = int(ranged.split("=")[1].split("-")[0])
                data = body[start:]
                self.send_response(206 if ranged else 200)
                self.send_header("Content-Length", str(len(data)))
                if ranged:
                    self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(body) - 1, len(body)))
                self.end_headers()
                if action == "cut":
                    self.wfile.write(data[: len(data) // 3])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                self.wfile.write(data)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """

    /// A server following `plan`; the requests it saw are `log()`.
    final class StagedServer {
        let process = Process()
        let directory: TemporaryDirectory
        let port: Int

        init(plan: [String]) throws {
            directory = try TemporaryDirectory("retry")
            let script = directory.url("server.py")
            try Files.write(script, RetryTests.script)
            let output = Pipe()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, plan.joined(separator: ","), directory.url("requests.log")]
            process.standardOutput = output
            try process.run()
            var line: [UInt8] = []
            let handle = output.fileHandleForReading
            while let byte = try handle.read(upToCount: 1)?.first, byte != UInt8(ascii: "\n") { line.append(byte) }
            guard let port = Int(String(decoding: line, as: UTF8.self)) else {
                process.terminate()
                throw CocoaError(.fileReadCorruptFile)
            }
            self.port = port
        }

        deinit {
            // SIGKILL: the child may inherit a mask that blocks SIGTERM from the test's thread.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// One line per request: the plan's action and the Range header ("-" when none).
        func log() throws -> [String] {
            String(decoding: try Files.read(directory.url("requests.log")), as: UTF8.self)
                .split(separator: "\n").map(String.init)
        }

        func connection(attempts: Int) -> (S3Connection, TransferCounters) {
            var configuration = S3Configuration(
                endpoint: "http://127.0.0.1:\(port)", pathStyle: true, region: "us-east-1",
                credentials: S3Credentials(accessKeyID: "key", secretAccessKey: "secret"))
            configuration.transport.attempts = attempts
            configuration.transport.retryDelay = 0.05
            let counters = TransferCounters()
            return (S3Connection(configuration: configuration, counters: counters, cancellation: nil), counters)
        }
    }

    @Test func throttlingAndServerErrorsAreRetriedWithBackoff() throws {
        let server = try StagedServer(plan: ["slowdown", "internal", "slowdown"])
        let (s3, counters) = server.connection(attempts: 6)
        let got = try #require(try s3.getObject(bucket: "b", key: "k", limit: 2 << 20))
        let same = got.bytes == Self.object  // a Bool: a failing #expect would diff 1 MiB arrays
        #expect(same, "\(got.bytes.count) bytes")
        #expect(counters.requests == 4 && counters.retries == 3)
        #expect(try server.log() == ["slowdown -", "internal -", "slowdown -", "ok -"])
    }

    @Test func aBrokenDownloadResumesFromTheFirstByteNotReceived() throws {
        let server = try StagedServer(plan: ["cut", "cut"])
        let (s3, counters) = server.connection(attempts: 6)
        let sink = MemorySink(limit: 2 << 20)
        try s3.get(bucket: "b", key: "k", range: nil, into: sink)
        let same = sink.bytes == Self.object  // a Bool: a failing #expect would diff 1 MiB arrays
        #expect(same, "\(sink.bytes.count) bytes")
        #expect(counters.retries == 2)
        let log = try server.log()
        #expect(log.count == 3 && log[0] == "cut -")
        // Each retry asks only for what has not arrived: a later start each time.
        let starts = log.dropFirst().map { Int($0.split(separator: "=").last?.split(separator: "-").first ?? "") ?? -1 }
        #expect(starts.count == 2 && starts[0] > 0 && starts[1] > starts[0], "\(log)")
    }

    @Test func aServerThatKeepsFailingIsOneLineAfterTheAttempts() throws {
        let server = try StagedServer(plan: Array(repeating: "internal", count: 10))
        let (s3, counters) = server.connection(attempts: 3)
        #expect {
            _ = try s3.getObject(bucket: "b", key: "k", limit: 2 << 20)
        } throws: { error in
            let error = error as? RemoteError
            return error?.kind == .server && error?.message.contains("HTTP 500: InternalError") == true
                && error?.message.contains("\n") == false
        }
        #expect(counters.requests == 3)
    }
}
