import Foundation
import PackageCore
import PackageTestSupport
import Synchronization
@testable import PackageDocument

/// Counts the I/O steps taken, by kind (and reads by path), so a test can assert what a
/// document operation did not touch.
final class IOCounter: IOFaultInjector {
    private let counts = Mutex<[IOStep: Int]>([:])
    private let readPaths = Mutex<[String]>([])
    func fault(before step: IOStep, path: String) -> InjectedFault? {
        counts.withLock { $0[step, default: 0] += 1 }
        if step == .read { readPaths.withLock { $0.append(path) } }
        return nil
    }
    func count(_ step: IOStep) -> Int { counts.withLock { $0[step, default: 0] } }
    var pathsRead: [String] { readPaths.withLock { $0 } }
}

/// The names in a directory, sorted, without pkgtool's own metadata (`.pkgtool`).
func visibleNames(in path: String) throws -> [String] {
    try DirectoryListing.names(in: FileDescriptor.openDirectory(path))
        .filter { $0 != PackageLayout.metadataDirectoryName }
        .sorted()
}

func fileURL(_ path: String) -> URL { URL(fileURLWithPath: path) }

func text(at path: String) throws -> String { String(decoding: try Files.read(path), as: UTF8.self) }

/// A product built beside the test bundle (`pkgdoc-demo`, `pkgtool`).
func builtExecutable(_ name: String) -> String {
    let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = (runner as NSString).deletingLastPathComponent
    for _ in 0..<4 {
        let candidate = directory + "/" + name
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = (directory as NSString).deletingLastPathComponent
    }
    return name
}

/// Starts `executable` without waiting for it.
func startProgram(_ executable: String, _ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    try process.run()
    return process
}

/// `runProgram` waited for on a Dispatch thread: a child that runs for seconds must not hold
/// one of the few threads of Swift's cooperative pool, which every other test's background
/// work (and every save's) needs.
func runProgramOffPool(_ executable: String, _ arguments: [String]) async throws -> (
    status: Int32, output: String, error: String
) {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            do { continuation.resume(returning: try runProgram(executable, arguments)) } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// Waits for `process` to exit on a Dispatch thread (see `runProgramOffPool`).
func waitForExit(_ process: Process) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        DispatchQueue.global().async {
            process.waitUntilExit()
            continuation.resume()
        }
    }
}
