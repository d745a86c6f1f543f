import Foundation
import PackageCore

/// Hashing against `xxhsum -H2`: one large file, a tree of small files on one and on all
/// cores, and peak memory on a 4 GiB file; and, in-process on the same large file, hashing
/// alone against hashing with content-defined chunking in the same pass.
public struct HashBenchmark {
    public var workDirectory: String
    public var pkgtool: String
    public var runs: Int
    public var fileSize: Int64 = 1 << 30
    public var treeFiles = 20_000
    public var hugeSize: Int64 = 4 << 30

    public init(workDirectory: String, pkgtool: String, runs: Int) {
        self.workDirectory = workDirectory
        self.pkgtool = pkgtool
        self.runs = runs
    }

    public typealias Result = SuiteResult

    public func run(log: (String) -> Void) throws -> Result {
        try FileSystem.makeDirectories(workDirectory)
        let bigFile = workDirectory + "/hash-1GiB.bin"
        let tree = workDirectory + "/hash-tree"
        let huge = workDirectory + "/hash-4GiB.sparse"
        log("generating a \(Format.bytes(fileSize)) file, a \(treeFiles)-file tree and a sparse \(Format.bytes(hugeSize)) file")
        if (try? FileSystem.status(bigFile).size) != fileSize {
            try FixtureWriter.randomFile(bigFile, size: fileSize, seed: 1)
        }
        if (try? FileSystem.status(tree)) == nil {
            try FixtureWriter.smallFileTree(tree + ".tmp", count: treeFiles, seed: 2)
            try FileSystem.rename(tree + ".tmp", to: tree)
        }
        try FixtureWriter.sparseFile(huge, size: hugeSize)

        var table = Table(["job", "median", "min", "max", "peak RSS", "cores busy"])
        var figures: [(String, JSONNumber)] = []
        var jobs: [(name: String, run: () throws -> ProcessCost)] = [
            ("pkgtool hash 1 GiB file", { try Spawn.run(pkgtool, ["hash", bigFile]) })
        ]
        let xxhsum = Spawn.which("xxhsum")
        if let xxhsum { jobs.append(("xxhsum -H2 1 GiB file", { try Spawn.run(xxhsum, ["-H2", bigFile]) })) }
        log("hashing the 1 GiB file (\(runs) runs, interleaved)")
        let fileSamples = try measureInterleaved(jobs, runs: runs)

        log("hashing the 1 GiB file in-process, alone and with chunking (\(runs) runs, interleaved; Gear kernel: \(ChunkingKernel.active))")
        let loadBefore = LoadAverage.oneMinute()
        let (chunkSamples, callingThreadCPU) = try measureChunking(bigFile)
        let chunkLoad = (loadBefore + LoadAverage.oneMinute()) / 2

        log("hashing the tree on 1 core and on all cores")
        let treeSamples = try measureInterleaved(
            [
                ("pkgtool hash tree --jobs 1", { try Spawn.run(pkgtool, ["hash", "--jobs", "1", tree]) }),
                ("pkgtool hash tree (all cores)", { try Spawn.run(pkgtool, ["hash", tree]) }),
            ]
                + (xxhsum.map { path in
                    [("find -exec xxhsum -H2 {} + (tree)", {
                        try Spawn.run("/bin/sh", ["-c", "find '\(tree)' -type f -exec '\(path)' -H2 {} + >/dev/null"])
                    })]
                } ?? []),
            runs: runs)

        log("hashing the sparse 4 GiB file for peak memory")
        let hugeSamples = try measureInterleaved(
            [("pkgtool hash 4 GiB file", { try Spawn.run(pkgtool, ["hash", huge]) })], runs: 1)

        for sample in fileSamples + chunkSamples + treeSamples + hugeSamples {
            table.add([
                sample.name, Format.seconds(sample.median), Format.seconds(sample.minimum),
                Format.seconds(sample.maximum), Format.bytes(sample.peakRSSBytes), String(format: "%.2f", sample.parallelism),
            ])
        }
        if fileSamples.count == 2 {
            let speed = fileSamples[1].median / fileSamples[0].median
            figures.append(("file_speed_vs_xxhsum", .double(speed)))
            table.add(["speed vs xxhsum -H2 (want ≥ 0.90×)", Format.ratio(speed), "", "", "", ""])
        }
        let chunking = ChunkingFigures(chunkSamples, callingThreadCPU: callingThreadCPU)
        figures.append(("chunking_speed_vs_hash", .double(chunking.pairedSpeed(1))))
        figures.append(("chunking_speed_of_medians_vs_hash", .double(chunking.speedOfMedians(1))))
        figures.append(("chunking_cpu_vs_hash", .double(chunking.cpuSpeed(1))))
        figures.append(("chunking_one_thread_speed_vs_hash", .double(chunking.pairedSpeed(2))))
        figures.append(("chunking_one_thread_cpu_vs_hash", .double(chunking.cpuSpeed(2))))
        figures.append(("chunking_interleaved_speed_vs_hash", .double(chunking.pairedSpeed(3))))
        figures.append(("chunking_portable_speed_vs_hash", .double(chunking.pairedSpeed(4))))
        figures.append(("chunking_hinted_speed_vs_hash", .double(chunking.pairedSpeed(5))))
        figures.append(("chunking_hinted_one_thread_speed_vs_hash", .double(chunking.pairedSpeed(6))))
        figures.append(("chunking_load_average", .double(chunkLoad)))
        if let projected = chunking.projectedTwoCoreSpeed(1) {
            figures.append(("chunking_projected_two_core_speed_vs_hash", .double(projected)))
        }
        table.add([
            "hash + chunks vs hash alone (want ≥ 0.90×): median of paired runs, of medians; CPU time",
            Format.ratio(chunking.pairedSpeed(1)), Format.ratio(chunking.speedOfMedians(1)), Format.ratio(chunking.cpuSpeed(1)),
            "", "",
        ])
        table.add([
            "hash + chunks, one thread, vs hash alone: paired, of medians; CPU time", Format.ratio(chunking.pairedSpeed(2)),
            Format.ratio(chunking.speedOfMedians(2)), Format.ratio(chunking.cpuSpeed(2)), "", "",
        ])
        table.add([
            "hash + chunks, one thread, interleaved Gear (CPUs without AVX-512), vs hash alone",
            Format.ratio(chunking.pairedSpeed(3)), "", Format.ratio(chunking.cpuSpeed(3)), "", "",
        ])
        table.add([
            "hash + chunks, one thread, byte-loop Gear, vs hash alone", Format.ratio(chunking.pairedSpeed(4)), "",
            Format.ratio(chunking.cpuSpeed(4)), "", "",
        ])
        table.add([
            "hash + chunks, previous list known, vs hash alone", Format.ratio(chunking.pairedSpeed(5)), "",
            Format.ratio(chunking.cpuSpeed(5)), "", "",
        ])
        table.add([
            "hash + chunks, previous list known, one thread, vs hash alone", Format.ratio(chunking.pairedSpeed(6)), "",
            Format.ratio(chunking.cpuSpeed(6)), "", "",
        ])
        if let projected = chunking.projectedTwoCoreSpeed(1) {
            table.add([
                "hash + chunks (two threads) vs hash alone on two free cores, from each thread's CPU time",
                Format.ratio(projected), "", "", "", "",
            ])
        }
        table.add(["load average (1 min) while hashing in-process", String(format: "%.1f", chunkLoad), "", "", "", ""])
        log(chunking.summary(load: chunkLoad))
        let speedup = treeSamples[0].median / treeSamples[1].median
        figures.append(("tree_parallel_speedup", .double(speedup)))
        table.add(["tree: all cores vs 1 (want ≥ 1.6×)", Format.ratio(speedup), "", "", "", ""])
        figures.append(("huge_file_peak_rss_bytes", .int(hugeSamples[0].peakRSSBytes)))
        table.add(["4 GiB file peak RSS (want ≤ 32 MiB)", Format.bytes(hugeSamples[0].peakRSSBytes), "", "", "", ""])
        figures.append(("file_median_seconds", .double(fileSamples[0].median)))
        try FileSystem.remove(huge)
        return Result(table: table, figures: figures, samples: fileSamples + chunkSamples + treeSamples + hugeSamples)
    }

    /// Hashes `path` in this process, alone (`ContentHash.ofFile`) and with chunking
    /// (`ContentHash.ofFileWithChunks`): on two threads (the default), on one thread
    /// with the CPU's Gear kernel, with the interleaved kernel (what CPUs without AVX-512 VBMI
    /// run) and with the byte loop, and with a previous chunk list whose two middle chunks
    /// differ (two threads, and one thread); interleaved, reusing one buffer and one state
    /// each as the scanner does.
    ///
    /// Also returns, per job and run, the CPU time of the calling thread alone (the rest of
    /// the process's CPU time in a helper-thread run is the helper's).
    func measureChunking(_ path: String) throws -> ([Sample], [[Double]]) {
        let buffer = ChunkBuffer()
        let hasher = ContentHasher()
        var helped = ChunkingHasher()
        var alone = ChunkingHasher(helperThread: false)
        var list: ChunkList?
        var hint: ChunkList?
        let plain = {
            try InProcessCost.measure {
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                _ = try ContentHash.ofFile(file, buffer: buffer, expectedSize: fileSize, hasher: hasher)
            }
        }
        let chunked = { (helper: Bool, kernel: ChunkingKernel?) in
            try InProcessCost.measure {
                ChunkingKernel.force(kernel)
                defer { ChunkingKernel.force(nil) }
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                let digest =
                    helper
                    ? try ContentHash.ofFileWithChunks(file, buffer: buffer, expectedSize: fileSize, chunker: &helped)
                    : try ContentHash.ofFileWithChunks(file, buffer: buffer, expectedSize: fileSize, chunker: &alone)
                if list == nil { list = digest.chunks }
                guard digest.chunks == list else { throw BenchError("two ways of chunking gave different chunk lists") }
            }
        }
        // The previous version's list, as if two neighbouring chunks in the middle had
        // held other bytes (what a 1 MiB overwrite there leaves): their hints fail.
        let hinted = { (helper: Bool) in
            try InProcessCost.measure {
                if hint == nil, let list {
                    var chunks = list.chunks
                    for index in [chunks.count / 2, chunks.count / 2 + 1] { chunks[index].hash = .empty }
                    hint = ChunkList(chunks)
                }
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                let digest =
                    helper
                    ? try ContentHash.ofFileWithChunks(
                        file, buffer: buffer, expectedSize: fileSize, chunker: &helped, previous: hint)
                    : try ContentHash.ofFileWithChunks(
                        file, buffer: buffer, expectedSize: fileSize, chunker: &alone, previous: hint)
                guard digest.chunks == list else { throw BenchError("the hinted chunk list differs from the searched one") }
            }
        }
        let jobs: [(name: String, run: () throws -> ProcessCost)] = [
            ("hash 1 GiB file in-process (hash alone)", plain),
            ("hash + chunks 1 GiB file in-process (two threads)", { try chunked(true, nil) }),
            ("hash + chunks 1 GiB file in-process, one thread", { try chunked(false, nil) }),
            ("hash + chunks 1 GiB file in-process, one thread, interleaved Gear", { try chunked(false, .interleaved) }),
            ("hash + chunks 1 GiB file in-process, one thread, byte-loop Gear", { try chunked(false, .portable) }),
            ("hash + chunks 1 GiB file in-process, previous list known (2 chunks differ)", { try hinted(true) }),
            ("hash + chunks 1 GiB file in-process, previous list known, one thread", { try hinted(false) }),
        ]
        var callingThreadCPU = Array(repeating: [Double](), count: jobs.count)
        let timed = jobs.enumerated().map { index, job in
            (
                name: job.name,
                run: { () throws -> ProcessCost in
                    let before = ThreadCPUTime.seconds()
                    let cost = try job.run()
                    callingThreadCPU[index].append(ThreadCPUTime.seconds() - before)
                    return cost
                }
            )
        }
        let samples = try measureInterleaved(timed, runs: runs)
        guard (list?.count ?? 0) > 0 else { throw BenchError("chunking the 1 GiB file produced no chunk list") }
        // measureInterleaved's warm-up runs come first: keep each job's last `runs` values.
        return (samples, callingThreadCPU.map { Array($0.suffix(runs)) })
    }
}

/// Speeds of the chunking jobs against the first job (hashing alone), measured in
/// interleaved runs: run i of every job ran back to back, so the median of the per-run
/// ratios is less exposed to the machine's load changing during the measurement than the
/// ratio of the medians. CPU time ratios say how much work each way adds, whatever the load.
struct ChunkingFigures {
    let samples: [Sample]

    /// Per job and run: the calling thread's CPU time (empty when not measured).
    let callingThreadCPU: [[Double]]

    init(_ samples: [Sample], callingThreadCPU: [[Double]] = []) {
        self.samples = samples
        self.callingThreadCPU = callingThreadCPU
    }

    /// What the job's speed would be with two free cores, whatever the load while it was
    /// measured: per run, hashing alone's CPU time over the longer of the two threads' CPU
    /// times (the calling thread's, and the rest of the process's: the helper's), which is
    /// the wall time when neither thread waits for a core; the median over runs. Nil when
    /// the threads' times were not measured. It leaves out the time a thread waits for the
    /// other at a hand-off; and on a loaded machine, where the threads take turns on a core,
    /// it misses how much they slow each other down when they do run at once (Specs/hashing.md).
    func projectedTwoCoreSpeed(_ job: Int) -> Double? {
        guard callingThreadCPU.count > job, callingThreadCPU[job].count == samples[job].costs.count,
            samples[0].costs.count == samples[job].costs.count, !samples[job].costs.isEmpty
        else { return nil }
        let ratios = zip(zip(samples[0].costs, samples[job].costs), callingThreadCPU[job]).map { pair, calling in
            let (alone, chunked) = pair
            let helper = max(chunked.userSeconds + chunked.systemSeconds - calling, 0)
            return (alone.userSeconds + alone.systemSeconds) / max(calling, helper, 1e-9)
        }
        return Sample.median(ratios)
    }

    func pairedSpeed(_ job: Int) -> Double {
        Sample.median(zip(samples[0].seconds, samples[job].seconds).map { $0 / max($1, 1e-9) })
    }

    func speedOfMedians(_ job: Int) -> Double { samples[0].median / max(samples[job].median, 1e-9) }

    /// The figures in a few lines, for the run's log.
    func summary(load: Double) -> String {
        let names = [
            "", "two threads", "one thread", "one thread, interleaved Gear", "one thread, byte-loop Gear",
            "previous list known", "previous list known, one thread",
        ]
        var lines = ["speed of hashing with chunking vs hashing alone (1 GiB, load average \(String(format: "%.1f", load))):"]
        for job in 1..<min(names.count, samples.count) {
            lines.append(
                "  \(names[job]): \(Format.ratio(pairedSpeed(job))) paired runs, \(Format.ratio(speedOfMedians(job))) of medians, "
                    + "\(Format.ratio(cpuSpeed(job))) in CPU time, \(String(format: "%.2f", samples[job].parallelism)) cores busy")
        }
        if let projected = projectedTwoCoreSpeed(1) {
            lines.append("  two threads on two free cores (from each thread's CPU time): \(Format.ratio(projected))")
        }
        return lines.joined(separator: "\n")
    }

    func cpuSpeed(_ job: Int) -> Double {
        let cpu = { (sample: Sample) in Sample.median(sample.costs.map { $0.userSeconds + $0.systemSeconds }) }
        return cpu(samples[0]) / max(cpu(samples[job]), 1e-9)
    }
}

/// The calling thread's CPU time, to tell a helper thread's share of a process's CPU time.
enum ThreadCPUTime {
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// The machine's load, to print beside figures measured on a shared machine.
enum LoadAverage {
    /// The 1-minute load average from /proc/loadavg (0 when unreadable).
    static func oneMinute() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
            let first = text.split(separator: " ").first, let value = Double(first)
        else { return 0 }
        return value
    }
}

/// A number for the JSON record.
public enum JSONNumber {
    case int(Int64)
    case double(Double)
}
