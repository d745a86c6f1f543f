import Foundation
import PackageCore

/// Hashing against `xxhsum -H2`: one large file, a tree of small files on one and on all
/// cores, and peak memory on a 4 GiB file; and, in-process on the same large file, hashing
/// alone against hashing with content-defined chunking in the same pass (issue 13).
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
        let chunkSamples = try measureChunking(bigFile)

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
        let chunkingSpeed = chunkSamples[0].median / chunkSamples[1].median
        figures.append(("chunking_speed_vs_hash", .double(chunkingSpeed)))
        figures.append(("chunking_portable_speed_vs_hash", .double(chunkSamples[0].median / chunkSamples[2].median)))
        table.add(["hash + chunks vs hash alone (want ≥ 0.90×)", Format.ratio(chunkingSpeed), "", "", "", ""])
        table.add([
            "hash + chunks, portable Gear loop, vs hash alone", Format.ratio(chunkSamples[0].median / chunkSamples[2].median),
            "", "", "", "",
        ])
        let hintedSpeed = chunkSamples[0].median / chunkSamples[3].median
        figures.append(("chunking_hinted_speed_vs_hash", .double(hintedSpeed)))
        table.add(["hash + chunks, previous list known, vs hash alone", Format.ratio(hintedSpeed), "", "", "", ""])
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
    /// (`ContentHash.ofFileWithChunks`, with the CPU's Gear kernel and with the portable
    /// loop), interleaved, reusing one buffer and one state each as the scanner does.
    func measureChunking(_ path: String) throws -> [Sample] {
        let buffer = ChunkBuffer()
        let hasher = ContentHasher()
        var chunker = ChunkingHasher()
        var list: ChunkList?
        var hint: ChunkList?
        let plain = {
            try InProcessCost.measure {
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                _ = try ContentHash.ofFile(file, buffer: buffer, expectedSize: fileSize, hasher: hasher)
            }
        }
        let chunked = { (portable: Bool) in
            try InProcessCost.measure {
                ChunkingKernel.forcePortable(portable)
                defer { ChunkingKernel.forcePortable(false) }
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                let digest = try ContentHash.ofFileWithChunks(file, buffer: buffer, expectedSize: fileSize, chunker: &chunker)
                list = digest.chunks
            }
        }
        // The previous version's list, as if two neighbouring chunks in the middle had
        // held other bytes (what a 1 MiB overwrite there leaves): their hints fail.
        let hinted = {
            try InProcessCost.measure {
                if hint == nil, let list {
                    var chunks = list.chunks
                    for index in [chunks.count / 2, chunks.count / 2 + 1] { chunks[index].hash = .empty }
                    hint = ChunkList(chunks)
                }
                let file = try FileDescriptor.open(path)
                file.adviseSequential()
                let digest = try ContentHash.ofFileWithChunks(
                    file, buffer: buffer, expectedSize: fileSize, chunker: &chunker, previous: hint)
                guard digest.chunks == list else { throw BenchError("the hinted chunk list differs from the searched one") }
            }
        }
        let samples = try measureInterleaved(
            [
                ("hash 1 GiB file in-process (hash alone)", plain),
                ("hash + chunks 1 GiB file in-process", { try chunked(false) }),
                ("hash + chunks 1 GiB file in-process (portable Gear)", { try chunked(true) }),
                ("hash + chunks 1 GiB file in-process, previous list known (2 chunks differ)", hinted),
            ], runs: runs)
        guard (list?.count ?? 0) > 0 else { throw BenchError("chunking the 1 GiB file produced no chunk list") }
        return samples
    }
}

/// A number for the JSON record.
public enum JSONNumber {
    case int(Int64)
    case double(Double)
}
