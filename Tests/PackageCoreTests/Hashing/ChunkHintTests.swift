import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("Chunking a new version with the previous chunk list as a hint")
struct ChunkHintTests {
    /// The digest of the file at `path`, plain or with `previous` as the hint, read in
    /// pieces of `pieceSize` bytes; `helped`: with its size known and the helper thread
    /// taking part whatever the size (the hint is then checked on the helper).
    func digest(
        _ path: String, parameters: ChunkingParameters, previous: ChunkList? = nil, pieceSize: Int = 1 << 20,
        helped: Bool = false, statistics: UnsafeMutablePointer<ContentHash.HintStatistics>? = nil
    ) throws -> ChunkedDigest {
        let file = try FileDescriptor.open(path)
        var chunker = helped ? ChunkingHasher(parameters: parameters, helpFrom: 0) : ChunkingHasher(parameters: parameters)
        let size = helped ? try file.status().size : nil
        return try ContentHash.ofFileWithChunks(
            file, buffer: ChunkBuffer(size: pieceSize), expectedSize: size, chunker: &chunker, previous: previous,
            statistics: statistics)
    }

    /// Edits of `base` (each a whole new file), named.
    func edits(of base: [UInt8], generator: inout SeededBytes) -> [(String, [UInt8])] {
        let middle = base.count / 2
        var overwritten = base
        overwritten.replaceSubrange(middle..<middle + 10_000, with: generator.bytes(10_000))
        var scattered = base
        for offset in stride(from: 5_000, to: base.count, by: 97_001) { scattered[offset] ^= 0xFF }
        return [
            ("identical", base),
            ("10 kB overwritten in the middle", overwritten),
            ("one byte inserted at the start", [0x42] + base),
            ("5,000 bytes inserted in the middle", Array(base[..<middle]) + generator.bytes(5_000) + Array(base[middle...])),
            ("20,000 bytes removed", Array(base[..<middle]) + Array(base[(middle + 20_000)...])),
            ("bytes flipped every 97 kB", scattered),
            ("appended", base + generator.bytes(30_000)),
            ("truncated inside a chunk", Array(base.prefix(base.count - 1_234))),
            ("the first half only", Array(base.prefix(middle))),
            ("another file", generator.bytes(base.count)),
            ("the file twice", base + base),
        ]
    }

    @Test("a hint never changes the result: small chunks, many edits, several piece sizes")
    func sameResult() throws {
        let directory = try TemporaryDirectory("chunk-hint")
        var generator = SeededBytes(seed: 70)
        for (label, base) in [("random", generator.bytes(400_000)), ("low entropy", lowEntropyBytes(400_000))] {
            let oldPath = directory.url("old")
            try Files.write(oldPath, base)
            let old = try #require(try digest(oldPath, parameters: smallChunking).chunks)
            #expect(old.count > 100)
            for (edit, bytes) in edits(of: base, generator: &generator) {
                let path = directory.url("new")
                try Files.write(path, bytes)
                let plain = try digest(path, parameters: smallChunking)
                for pieceSize in [4096, 65_536, 1 << 20] {
                    let hinted = try digest(path, parameters: smallChunking, previous: old, pieceSize: pieceSize)
                    #expect(hinted == plain, "\(label), \(edit), pieces of \(pieceSize)")
                }
                let helped = try digest(path, parameters: smallChunking, previous: old, helped: true)
                #expect(helped == plain, "\(label), \(edit), on the helper thread")
            }
        }
    }

    @Test("a list that describes nothing of the file is harmless")
    func misleadingHints() throws {
        let directory = try TemporaryDirectory("chunk-hint-bad")
        var generator = SeededBytes(seed: 71)
        let bytes = generator.bytes(300_000)
        let path = directory.url("file")
        try Files.write(path, bytes)
        let plain = try digest(path, parameters: smallChunking)
        let real = try #require(plain.chunks)
        // Right lengths with wrong hashes; right hashes shifted by one; one huge chunk;
        // many tiny chunks; every chunk the same hash.
        let wrongHashes = ChunkList(real.map { FileChunk(offset: $0.offset, length: $0.length, hash: .empty) })
        let shifted = ChunkList(
            zip(real.dropFirst(), real).reduce(into: [FileChunk]()) { list, pair in
                list.append(FileChunk(offset: list.last?.end ?? 0, length: pair.1.length, hash: pair.0.hash))
            })
        let huge = ChunkList([
            FileChunk(offset: 0, length: 1 << 40, hash: real[0].hash),
            FileChunk(offset: 1 << 40, length: 5, hash: real[1].hash),
        ])
        let tiny = ChunkList((0..<5_000).map { FileChunk(offset: Int64($0), length: 1, hash: real[$0 % real.count].hash) })
        let same = ChunkList((0..<50).map { FileChunk(offset: Int64($0) * 1000, length: 1000, hash: real[0].hash) })
        for (label, previous) in [
            ("wrong hashes", wrongHashes), ("shifted", shifted), ("huge", huge), ("tiny", tiny), ("same hash", same),
        ] {
            #expect(try digest(path, parameters: smallChunking, previous: previous, pieceSize: 4096) == plain, "\(label)")
            #expect(try digest(path, parameters: smallChunking, previous: previous, helped: true) == plain, "\(label), helped")
        }
    }

    @Test("1 MiB overwritten in a 24 MiB file: the hinted list equals the searched one")
    func standardParameters() throws {
        let directory = try TemporaryDirectory("chunk-hint-std")
        var generator = SeededBytes(seed: 72)
        var bytes = generator.bytes(24 << 20)
        let path = directory.url("movie")
        try Files.write(path, bytes)
        let old = try #require(try digest(path, parameters: .standard).chunks)
        bytes.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[9_876_543..<9_876_543 + (1 << 20)])) }
        try Files.write(path, bytes)
        let plain = try digest(path, parameters: .standard)
        var statistics = ContentHash.HintStatistics()
        #expect(try digest(path, parameters: .standard, previous: old, statistics: &statistics) == plain)
        var helpedStatistics = ContentHash.HintStatistics()
        #expect(try digest(path, parameters: .standard, previous: old, helped: true, statistics: &helpedStatistics) == plain)
        #expect(helpedStatistics.searchedBytes == statistics.searchedBytes, "\(helpedStatistics) \(statistics)")
        #expect(plain.hash == ContentHash.of(bytes))
        // Only the chunks around the edit and the last one were searched; a few MiB read twice.
        #expect(statistics.searchedBytes <= 12 << 20 && statistics.rereadBytes <= 8 << 20, "\(statistics)")
        // The unedited file: only its last chunk is searched, nothing is read twice.
        try Files.write(path, Array(bytes))
        var unchanged = ContentHash.HintStatistics()
        let again = try digest(path, parameters: .standard, previous: plain.chunks, statistics: &unchanged)
        #expect(again == plain && unchanged.rereadBytes == 0)
        #expect(unchanged.searchedBytes == (plain.chunks?.last?.length ?? -1))
    }
}
