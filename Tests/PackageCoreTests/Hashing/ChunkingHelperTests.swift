import CHashKernel
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

    /// A file of `size` seeded random bytes in a new temporary directory, which lives as
    /// long as the caller keeps it.
    static func randomFile(_ prefix: String, seed: UInt64, size: Int) throws
        -> (directory: TemporaryDirectory, path: String, data: [UInt8])
    {
        let directory = try TemporaryDirectory(prefix)
        var generator = SeededBytes(seed: seed)
        let data = generator.bytes(size)
        let path = directory.url("data")
        try Files.write(path, data)
        return (directory, path, data)
    }

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

    @Test("a file read by both threads: same digest, with and without a known size, and stuttering reads")
    func readByBothThreads() throws {
        let (directory, path, data) = try Self.randomFile("chunk-helper-read", seed: 65, size: 13 * Self.mebibyte + 4097)
        defer { withExtendedLifetime(directory) {} }
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

    @Test("both threads read from the file's offset, stop where a shrunk file ends, and leave the offset after what they read")
    func offsetsAndShortFiles() throws {
        let (directory, path, data) = try Self.randomFile("chunk-helper-offsets", seed: 68, size: 11 * Self.mebibyte + 12345)
        defer { withExtendedLifetime(directory) {} }
        var chunker = ChunkingHasher()
        for (start, expected) in [(0, data.count), (3_000_001, data.count - 3_000_001), (1 << 20, 20 << 20)] {
            let file = try FileDescriptor.open(path)
            _ = try file.seek(to: Int64(start))
            // (1 MiB, 20 MiB): the size a stat gave before the file shrank to 11 MiB.
            let digest = try ContentHash.ofFileWithChunks(
                file, buffer: ChunkBuffer(), expectedSize: Int64(expected), chunker: &chunker)
            #expect(digest == alone(Array(data[start...].prefix(expected))), "from \(start)")
            #expect(try file.seek(to: 0, from: SEEK_CUR) == Int64(min(data.count, start + expected)))
        }
        // A size ending inside or at the end of a piece, odd and even piece counts.
        for size in [4 << 20, (5 << 20) - 1, (5 << 20) + 1, 6 << 20] {
            let file = try FileDescriptor.open(path)
            let digest = try ContentHash.ofFileWithChunks(
                file, buffer: ChunkBuffer(), expectedSize: Int64(size), chunker: &chunker)
            #expect(digest == alone(Array(data.prefix(size))), "\(size) bytes")
        }
    }

    @Test("a read that fails half-way throws, and the chunker then hashes the next file right")
    func failedRead() throws {
        let (directory, path, data) = try Self.randomFile("chunk-helper-fail", seed: 66, size: 9 * Self.mebibyte)
        defer { withExtendedLifetime(directory) {} }
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

    @Test("a hinted file: a read failing on either thread (the reader's, the helper's reading again) throws, and the chunker goes on right")
    func failedHintedRead() throws {
        let directory = try TemporaryDirectory("chunk-helper-hint-fail")
        var generator = SeededBytes(seed: 67)
        var data = generator.bytes(9 * Self.mebibyte)
        let path = directory.url("data")
        try Files.write(path, data)
        var chunker = ChunkingHasher()
        let old = try #require(try ContentHash.ofFileWithChunks(
            FileDescriptor.open(path), buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker).chunks)
        // Two edits: the helper reads the chunks around them again, with its own descriptor.
        data.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[2_000_000..<2_100_000])) }
        data.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[7_000_000..<7_100_000])) }
        try Files.write(path, data)
        let expected = alone(data)
        let counter = StepCounter()
        try IOFaultInjection.withInjector(counter) {
            let digest = try ContentHash.ofFileWithChunks(
                FileDescriptor.open(path), buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker,
                previous: old)
            #expect(digest == expected)
        }
        let reads = counter.count(.read)
        #expect(reads > 10, "the reader's nine reads and the helper's reading again")
        for failing in 1...reads {
            #expect(throws: FileSystemError.self, "read \(failing) of \(reads)") {
                try IOFaultInjection.withInjector(FailNth(.read, index: failing, error: .ioError)) {
                    _ = try ContentHash.ofFileWithChunks(
                        FileDescriptor.open(path), buffer: ChunkBuffer(), expectedSize: Int64(data.count),
                        chunker: &chunker, previous: old)
                }
            }
            let digest = try ContentHash.ofFileWithChunks(
                FileDescriptor.open(path), buffer: ChunkBuffer(), expectedSize: Int64(data.count), chunker: &chunker,
                previous: old)
            #expect(digest == expected, "read \(failing) failed")
        }
    }
}

/// Cut candidates computed ahead by the reading thread (`SectionMatches`) change where the
/// search runs, never the cuts: a cutter fed pieces with every section, every other
/// section or none computed ahead must give the byte-by-byte rule's list.
@Suite("Cut candidates computed ahead")
struct SectionMatchesTests {
    /// Chunks of 2 KiB to 32 KiB, with masks sparse enough that a 64 KiB section's matches
    /// fit its list (about 16 for the 12-bit loose mask, so some sections overflow too).
    static let parameters = ChunkingParameters(
        minimumSize: 2048, targetSize: 8192, maximumSize: 32768,
        strictMask: 0x8000_0000_0000_3FFF, looseMask: 0x0000_0000_0000_0FFF, fileThreshold: 4096)

    enum Ahead: CaseIterable { case none, everyOther, all }

    @Test("the cutter's list is the rule's, whichever sections were computed ahead", arguments: Ahead.allCases)
    func aheadChangesNothing(ahead: Ahead) throws {
        var generator = SeededBytes(seed: 71)
        let runs = [UInt8](repeating: 0xD2, count: 200_000) + [UInt8](repeating: 0x35, count: 150_000)
        let data = generator.bytes(3 << 20) + lowEntropyBytes(600_000) + runs + generator.bytes(1 << 20)
        let cutter = ChunkCutter(parameters: Self.parameters)
        var computed = 0
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let piece = UnsafeRawBufferPointer(rebasing: bytes[offset..<min(bytes.count, offset + ChunkingHelper.slotSize)])
                let matches = SectionMatches()
                if ahead == .everyOther {
                    // The helper's claim on the even sections: the reader computes the odd ones.
                    for section in stride(from: 2, to: SectionMatches.sections, by: 2) { _ = matches.take(section) }
                }
                if ahead != .none {
                    while matches.computeNext(of: piece, parameters: Self.parameters) { computed += 1 }
                }
                cutter.consume(piece, ahead: matches)
                offset += piece.count
            }
        }
        let chunks = cutter.finish()
        #expect(chunks.map { Int($0.end) } == referenceChunkEnds(data, parameters: Self.parameters))
        #expect(ChunkList(chunks) == alone(data, parameters: Self.parameters).chunks)
        #expect((computed > 0) == (ahead != .none))
    }

    @Test("a section's list holds every position matching either mask, flagged, or says it overflowed")
    func listsMatchTheRule() {
        var generator = SeededBytes(seed: 72)
        let data = generator.bytes(1 << 20)
        let table = ChunkingParameters.gearTable
        data.withUnsafeBytes { bytes in
            let matches = SectionMatches()
            while matches.computeNext(of: bytes, parameters: Self.parameters) {}
            var hash: UInt64 = 0
            var expected: [[UInt32]] = Array(repeating: [], count: SectionMatches.sections)
            for index in data.indices {
                hash = (hash << 1) &+ table[Int(data[index])]
                var entry = UInt32(index)
                if hash & Self.parameters.strictMask == 0 { entry |= PKG_GEAR_MATCH_FIRST }
                if hash & Self.parameters.looseMask == 0 { entry |= PKG_GEAR_MATCH_SECOND }
                if entry != UInt32(index) { expected[index / SectionMatches.sectionSize].append(entry) }
            }
            var overflowed = 0
            for section in 1..<SectionMatches.sections {
                if let list = matches.take(section) {
                    #expect(Array(list) == expected[section], "section \(section)")
                } else {
                    #expect(expected[section].count > SectionMatches.capacity, "section \(section)")
                    overflowed += 1
                }
            }
            #expect(overflowed < SectionMatches.sections / 2)
            #expect(matches.take(0) == nil)
        }
    }
}
