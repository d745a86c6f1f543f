import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// Feeds `data` in pieces of the sizes `pieces` yields (cycled) to a chunker whose helper
/// thread takes part from `helpFrom` bytes on.
func helped(
    _ data: [UInt8], parameters: ChunkingParameters = .standard, pieces: [Int], helpFrom: Int64 = 0
) -> ChunkedDigest {
    var chunker = ChunkingHasher(parameters: parameters, helpFrom: helpFrom)
    return feed(data, to: &chunker, pieces: pieces)
}

/// The digest one thread computes (the helper never takes part).
func alone(_ data: [UInt8], parameters: ChunkingParameters = .standard) -> ChunkedDigest {
    helped(data, parameters: parameters, pieces: [1 << 20], helpFrom: .max)
}

func feed(_ data: [UInt8], to chunker: inout ChunkingHasher, pieces: [Int], expectedSize: Int64? = nil) -> ChunkedDigest {
    chunker.reset(expectedSize: expectedSize)
    data.withUnsafeBytes { bytes in
        var offset = 0
        var index = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + max(1, pieces[index % pieces.count]))
            chunker.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
            offset = end
            index += 1
        }
    }
    return chunker.finish()
}

/// The helper thread changes where the work runs, never the result: every path (pieces
/// copied into its slots, pieces lent to it, a file read into its slots) must give the
/// list the byte-by-byte rule gives.
@Suite("Chunking on a helper thread")
struct ChunkingHelperTests {
    static let mebibyte = 1 << 20

    @Test("copied and lent pieces give the reference cuts and hashes", arguments: [
        [1], [63], [64, 65], [4096], [100_003], [1 << 20], [(1 << 20) + 1], [2 << 20], [3 << 20, 17, 5000],
    ])
    func piecesThroughTheHelper(pieces: [Int]) throws {
        var generator = SeededBytes(seed: 61)
        let small = pieces.allSatisfy { $0 < 4096 }
        for data in [generator.bytes(small ? 300_000 : 7 * Self.mebibyte + 3), lowEntropyBytes(small ? 300_000 : 5 * Self.mebibyte)] {
            let digest = helped(data, parameters: smallChunking, pieces: pieces)
            let ends = try #require(digest.chunks).map { Int($0.end) }
            #expect(ends == referenceChunkEnds(data, parameters: smallChunking), "pieces \(pieces)")
            #expect(digest == alone(data, parameters: smallChunking), "pieces \(pieces)")
            #expect(digest.hash == ContentHash.of(data))
        }
    }

    @Test("the standard parameters: the helper's list equals the list of one thread")
    func standardParameters() {
        var generator = SeededBytes(seed: 62)
        let data = generator.bytes(21 * Self.mebibyte + 777)
        let single = alone(data)
        #expect((single.chunks?.count ?? 0) > 10)
        #expect(helped(data, pieces: [1 << 20]) == single)
        #expect(helped(data, pieces: [65_536, 3 << 20]) == single)
        #expect(helped(data, pieces: [data.count]) == single)
    }

    @Test("one chunker for many files: the parked helper starts each file afresh")
    func reuse() {
        var generator = SeededBytes(seed: 63)
        var chunker = ChunkingHasher(parameters: smallChunking, helpFrom: 100_000)
        for round in 0..<12 {
            let data = round % 3 == 0 ? lowEntropyBytes(50_000 + round * 40_000) : generator.bytes(50_000 + round * 40_000)
            let expected = alone(data, parameters: smallChunking)
            let sizeHint: Int64? = round % 2 == 0 ? Int64(data.count) : nil
            #expect(feed(data, to: &chunker, pieces: [9_000 + round * 1_000], expectedSize: sizeHint) == expected, "round \(round)")
        }
    }

    @Test("a file abandoned half-way leaves nothing behind for the next one")
    func abandoned() {
        var generator = SeededBytes(seed: 64)
        let first = generator.bytes(6 * Self.mebibyte)
        let second = generator.bytes(5 * Self.mebibyte)
        var chunker = ChunkingHasher()
        chunker.reset(expectedSize: Int64(first.count))
        first.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: 3 * Self.mebibyte, by: 100_000) {
                chunker.update(UnsafeRawBufferPointer(rebasing: bytes[start..<start + 100_000]))
            }
        }
        #expect(feed(second, to: &chunker, pieces: [1 << 20]) == alone(second))
        // Dropped with pieces in flight: the helper is drained, then stopped.
        var dropped = ChunkingHasher(parameters: .standard, helpFrom: 0)
        second.withUnsafeBytes { dropped.update(UnsafeRawBufferPointer(rebasing: $0[..<(3 * Self.mebibyte)])) }
        _ = consume dropped
    }

    @Test("a file read into the helper's slots: same digest, with and without a known size, and stuttering reads")
    func readIntoSlots() throws {
        let directory = try TemporaryDirectory("chunk-helper-read")
        var generator = SeededBytes(seed: 65)
        let data = generator.bytes(13 * Self.mebibyte + 4097)
        let path = directory.url("data")
        try Files.write(path, data)
        let expected = alone(data)
        var chunker = ChunkingHasher()
        for size in [Int64(data.count), nil] {
            let file = try FileDescriptor.open(path)
            let digest = try ContentHash.ofFileWithChunks(file, buffer: ChunkBuffer(), expectedSize: size, chunker: &chunker)
            #expect(digest == expected, "expected size \(String(describing: size))")
        }
        let stuttered = try IOFaultInjection.withInjector(StutteringIO()) {
            let file = try FileDescriptor.open(path)
            return try ContentHash.ofFileWithChunks(file, buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker)
        }
        #expect(stuttered == expected)
        // A size that turned out too small: reading stops there, as for a plain hash.
        let file = try FileDescriptor.open(path)
        let shortened = try ContentHash.ofFileWithChunks(file, buffer: ChunkBuffer(), expectedSize: 6 << 20, chunker: &chunker)
        #expect(shortened == alone(Array(data.prefix(6 << 20))))
    }

    @Test("a read that fails half-way throws, and the chunker then hashes the next file right")
    func failedRead() throws {
        let directory = try TemporaryDirectory("chunk-helper-fail")
        var generator = SeededBytes(seed: 66)
        let data = generator.bytes(9 * Self.mebibyte)
        let path = directory.url("data")
        try Files.write(path, data)
        var chunker = ChunkingHasher()
        for failing in [1, 2, 5, 9] {
            #expect(throws: FileSystemError.self) {
                try IOFaultInjection.withInjector(FailNth(.read, index: failing, error: .ioError)) {
                    let file = try FileDescriptor.open(path)
                    _ = try ContentHash.ofFileWithChunks(
                        file, buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker)
                }
            }
            let file = try FileDescriptor.open(path)
            let digest = try ContentHash.ofFileWithChunks(
                file, buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker)
            #expect(digest == alone(data), "read \(failing) failed")
        }
    }
}
