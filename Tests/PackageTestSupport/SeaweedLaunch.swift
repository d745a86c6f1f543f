import Foundation
import Glibc

/// What starting a local SeaweedFS (`weed server -s3` on 127.0.0.1) takes, for the sync
/// tests and the sync benchmark alike: free ports, the weed executable, an identity
/// configuration that makes every request signed, and the server's arguments. Each caller
/// keeps its own process handling (the tests restart and kill the server; the benchmark
/// reads its metrics).
package enum SeaweedLaunch {
    /// The weed executable: `PKGTOOL_WEED` when it names one, else what
    /// `Scripts/seaweedfs install` (at `script`) installs into `.build/seaweedfs` and prints.
    package static func weedExecutable(script: String) throws -> String {
        if let given = ProcessInfo.processInfo.environment["PKGTOOL_WEED"], access(given, X_OK) == 0 { return given }
        guard access(script, X_OK) == 0 else { throw SeaweedLaunchError("\(script) is missing or not executable") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, "install"]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complaint = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let weed = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, access(weed, X_OK) == 0 else {
            throw SeaweedLaunchError(
                "Scripts/seaweedfs install failed (status \(process.terminationStatus)): "
                    + String(decoding: complaint, as: UTF8.self))
        }
        return weed
    }

    /// Writes `directory/s3.json`: one identity, allowed everything, so that the gateway
    /// refuses anonymous requests and checks every signature.
    package static func writeIdentities(name: String, accessKey: String, secretKey: String, in directory: String) throws {
        let identities = """
            {"identities":[{"name":"\(name)","credentials":[{"accessKey":"\(accessKey)",\
            "secretKey":"\(secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
            """
        try identities.write(toFile: directory + "/s3.json", atomically: true, encoding: .utf8)
    }

    /// `weed`'s arguments for a single-process server with its data in `directory/data`:
    /// master, volume, filer and S3 on `ports[0…3]` (their gRPC ports 10000 above), the
    /// identities of `writeIdentities`, telemetry and the optional gateways off.
    package static func serverArguments(
        directory: String, ports: [Int], volumeSizeLimitMB: Int, metricsPort: Int? = nil
    ) -> [String] {
        precondition(ports.count >= 4, "master, volume, filer and S3 ports")
        var arguments = [
            "server", "-dir=\(directory)/data", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
            "-master.port=\(ports[0])", "-volume.port=\(ports[1])", "-filer.port=\(ports[2])",
            "-master.port.grpc=\(ports[0] + 10000)", "-volume.port.grpc=\(ports[1] + 10000)",
            "-filer.port.grpc=\(ports[2] + 10000)", "-s3", "-s3.port=\(ports[3])", "-s3.port.grpc=\(ports[3] + 10000)",
            "-s3.config=\(directory)/s3.json", "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.telemetry=false",
            "-volume.max=0", "-master.volumeSizeLimitMB=\(volumeSizeLimitMB)",
        ]
        if let metricsPort { arguments.append("-metricsPort=\(metricsPort)") }
        return arguments
    }

    /// `count` ports p such that p and p + 10000 (weed's gRPC ports) are both free now.
    package static func freePorts(_ count: Int) throws -> [Int] {
        var ports: [Int] = []
        var tries = 0
        while ports.count < count {
            tries += 1
            if tries > 2000 { throw SeaweedLaunchError("no free ports found for SeaweedFS") }
            let candidate = Int.random(in: 20000...30000)
            if !ports.contains(candidate), isFree(candidate), isFree(candidate + 10000) { ports.append(candidate) }
        }
        return ports
    }

    private static func isFree(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return withLoopbackAddress(port: port) { bind(descriptor, $0, $1) == 0 }
    }

    /// Calls `body` with 127.0.0.1:`port` as a `sockaddr` and its length (for bind, connect).
    package static func withLoopbackAddress<Result>(
        port: Int, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}

/// Why a local SeaweedFS could not be started.
package struct SeaweedLaunchError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
