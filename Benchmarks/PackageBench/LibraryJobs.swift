import Foundation
import Glibc
import PackageCore

/// The library leg of sweep (b): what a document application pays. A `FileWrapper` tree is
/// read from the package once (untimed, as an application opens its document); each run
/// replaces one small file's contents in memory (untimed) and times
/// `PackageSaver.save(FileWrapperSource(tree), to: package, options:)` in this process. The tree read from
/// the package knows what changed since, so from the second save on the cost should follow
/// the change, not the package.
///
/// Measured in-process: wall time around the call, CPU time and bytes written and read
/// from this process's own counters (`getrusage`, `/proc/self/io`) before and after. Peak
/// RSS would be the harness's own and is not reported.
enum LibraryJobs {
    /// One job per fsync policy, each on its own package made by a first save.
    static func make(_ workspace: Workspace, fsyncPolicies: [String]) throws -> [Job] {
        let path = workspace.tree.package.smallFiles[workspace.tree.editedPageIndex]
        var jobs: [Job] = []
        for fsync in fsyncPolicies {
            let package = workspace.directory + "/library-journaled-fsync-\(fsync)"
            _ = try Spawn.run(workspace.pkgtool, ["save", "--strategy", "journaled", "--fsync", "none", workspace.source, package])
            let root = try FileWrapper(url: URL(fileURLWithPath: package))
            let components = path.split(separator: "/").map(String.init)
            var parent = root
            for name in components.dropLast() {
                guard let child = parent.fileWrapper(forKey: name) else { throw BenchError("no '\(name)' in \(package)") }
                parent = child
            }
            let name = components.last!
            guard let original = parent.fileWrapper(forKey: name) else { throw BenchError("no '\(path)' in \(package)") }
            let size = Int(try original.readRegularFileContents().count)
            let options = SaveOptions(strategy: .journaled, durability: fsync == "full" ? .full : .none)
            let directory = parent
            var version = 0
            let seed = workspace.shape.seed
            jobs.append(
                Job(name: "library save journaled", tool: "library", strategy: "journaled", fsync: fsync) {
                    // The edit, in memory: a new version of the page, same size.
                    version += 1
                    var bytes = [UInt8](repeating: 0, count: max(size, 1))
                    var generator = SeededGenerator(seed: ShapeGenerator.mix(seed, 0x4C49_4200 &+ UInt64(version)))
                    let count = SmallContent.fill(&bytes, size: size, index: 0, version: 1_000_000 + version, generator: &generator)
                    if let old = directory.fileWrapper(forKey: name) { directory.removeFileWrapper(old) }
                    _ = directory.addRegularFile(withContents: Data(bytes[..<count]), preferredFilename: name)
                    // The save, timed.
                    var statistics: SaveStatistics?
                    let cost = try InProcessCost.measure {
                        statistics = try PackageSaver.save(FileWrapperSource(root), to: package, options: options).statistics
                    }
                    return Outcome(
                        cost: cost, filesWritten: statistics?.filesWritten,
                        reportedBytes: statistics.map { $0.bytesWritten + $0.metadataBytesWritten },
                        command: "PackageSaver.save(FileWrapperSource(FileWrapper(url: \(package))) with \(path) replaced, to: \(package), "
                            + "options: SaveOptions(strategy: .journaled, durability: .\(fsync)))",
                        measuredRSS: false)
                })
        }
        return jobs
    }
}

/// What a call in this process cost, from the process's own counters.
enum InProcessCost {
    static func measure(_ body: () throws -> Void) throws -> ProcessCost {
        let before = snapshot()
        try body()
        let after = snapshot()
        return ProcessCost(
            status: 0, seconds: after.wall - before.wall, userSeconds: after.user - before.user,
            systemSeconds: after.system - before.system, peakRSSBytes: 0,
            bytesWritten: after.written - before.written, bytesRead: after.read - before.read, standardOutput: "")
    }

    struct Counters {
        var wall: Double
        var user: Double
        var system: Double
        var written: Int64
        var read: Int64
    }

    static func snapshot() -> Counters {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        var written: Int64 = 0
        var read: Int64 = 0
        if let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) {
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: ":")
                guard parts.count == 2, let value = Int64(parts[1].trimmingCharacters(in: .whitespaces)) else { continue }
                if parts[0] == "write_bytes" { written = value }
                if parts[0] == "read_bytes" { read = value }
            }
        }
        return Counters(
            wall: Double(now.tv_sec) + Double(now.tv_nsec) / 1e9,
            user: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
            system: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6, written: written, read: read)
    }
}
