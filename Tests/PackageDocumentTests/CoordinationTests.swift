import Foundation
import PackageCore
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

@Suite("File coordination")
struct CoordinationTests {
    @Test("a coordinated read waits for a coordinated write of the same package, in one process")
    func readWaitsForWrite() async throws {
        let directory = try TemporaryDirectory("coord-local")
        let package = directory.path + "/Doc.pkg"
        try Files.makeDirectory(package)
        try Files.write(package + "/a.txt", "a")
        let coordinator = FileCoordinator(documentURL: fileURL(package))
        let events = Mutex<[String]>([])
        // Hand-offs, no clock: the writer holds the lock, the read starts, and only once the
        // read has reached its lock (the `.lock` step of the I/O seam) does the write finish.
        let writerHolds = DispatchSemaphore(value: 0)
        let readerAtLock = DispatchSemaphore(value: 0)
        let writer = Thread {
            var error: NSError?
            coordinator.coordinate(writingItemAt: fileURL(package), options: [], error: &error) { _ in
                writerHolds.signal()
                readerAtLock.wait()
                events.withLock { $0.append("write done") }
            }
        }
        writer.start()
        writerHolds.wait()
        var error: NSError?
        IOFaultInjection.withInjector(SignalAtStep(.lock, readerAtLock)) {
            coordinator.coordinate(readingItemAt: fileURL(package + "/a.txt"), options: [], error: &error) { url in
                events.withLock { $0.append("read \(url.lastPathComponent)") }
            }
        }
        #expect(error == nil)
        #expect(events.withLock { $0 } == ["write done", "read a.txt"])
    }

    @Test("coordinations nest within a task, and a write inside a read of the same item is refused")
    func nesting() throws {
        let directory = try TemporaryDirectory("coord-nest")
        let package = directory.path + "/Doc.pkg"
        try Files.makeDirectory(package)
        let coordinator = FileCoordinator(documentURL: fileURL(package))
        let inner = try coordinator.coordinate(writingItemAt: fileURL(package)) { _ in
            try FileCoordinator(documentURL: fileURL(package)).coordinate(readingItemAt: fileURL(package + "/x")) { _ in 42 }
        }
        #expect(inner == 42)
        var outer: NSError?
        var innerError: NSError?
        coordinator.coordinate(readingItemAt: fileURL(package), options: [], error: &outer) { _ in
            coordinator.coordinate(writingItemAt: fileURL(package), options: [], error: &innerError) { _ in
                Issue.record("a write ran inside a read of the same package")
            }
        }
        #expect(outer == nil)
        #expect(innerError?.code == CocoaError.fileLocking.rawValue)
    }

    @Test("two hosts in two processes saving one document take turns")
    func twoProcessesFlatFile() async throws {
        let directory = try TemporaryDirectory("coord-two")
        let path = directory.path + "/count.txt"
        try Files.write(path, "start")
        let demo = builtExecutable("pkgdoc-demo")
        let logs = [directory.path + "/a.log", directory.path + "/b.log"]
        for log in logs { try Files.write(log, "") }
        let rounds = 12
        let processes = try ["A", "B"].enumerated().map { index, label in
            try startProgram(demo, ["counter", path, String(rounds), label, "15", logs[index]])
        }
        for process in processes { await waitForExit(process) }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        var intervals: [(start: Int64, end: Int64)] = []
        for log in logs {
            for line in try text(at: log).split(separator: "\n") {
                let parts = line.split(separator: " ").compactMap { Int64($0) }
                intervals.append((parts[0], parts[1]))
            }
        }
        #expect(intervals.count == 2 * rounds)
        intervals.sort { $0.start < $1.start }
        let overlaps = zip(intervals, intervals.dropFirst()).filter { $0.end > $1.start }.count
        #expect(overlaps == 0, "writes of the two processes overlapped \(overlaps) times")
        #expect(["A \(rounds)", "B \(rounds)"].contains(try text(at: path)))
        #expect(try visibleNames(in: directory.path) == ["a.log", "b.log", "count.txt"])
    }

    @Test("two hosts in two processes saving one notebook package leave it consistent")
    func twoProcessesPackage() async throws {
        let directory = try TemporaryDirectory("coord-notebook")
        let path = directory.path + "/Shared.notebook"
        let demo = builtExecutable("pkgdoc-demo")
        #expect(try await runProgramOffPool(demo, ["notebook-make", path, "50"]).status == 0)
        let rounds = 8
        let processes = try ["A", "B"].map { label in try startProgram(demo, ["notebook-saves", path, String(rounds), label]) }
        for process in processes { await waitForExit(process) }
        #expect(processes.allSatisfy { $0.terminationStatus == 0 })
        let first = try await runProgramOffPool(demo, ["notebook-first-page", path])
        #expect(["A \(rounds)\n", "B \(rounds)\n"].contains(first.output))
        let verify = try await runProgramOffPool(builtExecutable("pkgtool"), ["verify", path])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        #expect(try visibleNames(in: path + "/pages").count == 50)
    }
}
