import CHashKernel
import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// Small chunks (256 B minimum, 1 KiB target, 4 KiB maximum) so that a few hundred KiB
/// give hundreds of cut points. The masks include the low 8 bits, as the standard ones do.
let smallChunking = ChunkingParameters(
    minimumSize: 256, targetSize: 1024, maximumSize: 4096,
    strictMask: 0x8400_2000_0000_03FF, looseMask: 0x8000_0000_0000_00FF, fileThreshold: 4096)

/// Feeds `data` to a chunker in pieces of the sizes `pieces` yields (cycled).
func chunked(_ data: [UInt8], parameters: ChunkingParameters = .standard, pieces: [Int] = [1 << 20]) -> ChunkedDigest {
    var chunker = ChunkingHasher(parameters: parameters)
    return feed(data, to: &chunker, pieces: pieces)
}

/// The cut rule of Specs/hashing.md written out byte by byte: the chunk ends (exclusive).
func referenceChunkEnds(_ data: [UInt8], parameters: ChunkingParameters) -> [Int] {
    let table = ChunkingParameters.gearTable
    var hash: UInt64 = 0
    var start = 0
    var ends: [Int] = []
    for index in data.indices {
        hash = (hash << 1) &+ table[Int(data[index])]
        let length = index + 1 - start
        guard length >= parameters.minimumSize else { continue }
        let mask = length < parameters.targetSize ? parameters.strictMask : parameters.looseMask
        if hash & mask == 0 || length >= parameters.maximumSize {
            ends.append(index + 1)
            start = index + 1
        }
    }
    if start < data.count { ends.append(data.count) }
    return ends
}

/// Bytes with little entropy: text lines with a counter, runs of one byte, a repeated
/// 3-byte pattern. They exercise dense filter candidates and long runs without cuts.
func lowEntropyBytes(_ count: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count + 64)
    var line = 0
    while bytes.count < count {
        switch line % 7 {
        case 0: bytes += Array(repeating: 0, count: 700)
        case 3: bytes += Array(repeating: 0x20, count: 61)
        case 5: for _ in 0..<300 { bytes += [0xAB, 0xCD, 0xEF] }
        default: bytes += Array("line \(line): the quick brown fox jumps over the lazy dog\n".utf8)
        }
        line += 1
    }
    return Array(bytes.prefix(count))
}

@Suite("Content-defined chunks")
struct ChunkingTests {
    static let mebibyte = 1 << 20

    @Test("the Gear table is SplitMix64 from the seed Specs/hashing.md gives")
    func gearTable() {
        var generator = SeededBytes(seed: 0x706B_6763_6875_6E6B)
        let expected = (0..<256).map { _ in generator.next() }
        #expect(ChunkingParameters.gearTable == expected)
        var bytes: [UInt8] = []
        for value in expected { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        #expect(ContentHash.of(bytes).description == "a5876f60a8811cd202cd403eb1fd56f3")
    }

    @Test("cut points follow the reference rule, with every kernel, on random and low-entropy bytes")
    func referenceRule() {
        var generator = SeededBytes(seed: 41)
        let random = generator.bytes(600_000)
        let structured = lowEntropyBytes(600_000)
        // Few cuts: the interleaved kernel's four 4 KiB streams then search whole groups.
        let sparse = ChunkingParameters(
            minimumSize: 256, targetSize: 40_000, maximumSize: 200_000,
            strictMask: 0x8400_2000_0000_FFFF, looseMask: 0x8000_0000_0000_3FFF, fileThreshold: 4096)
        for kernel in ChunkingKernel.available {
            ChunkingKernel.force(kernel)
            defer { ChunkingKernel.force(nil) }
            for (label, data) in [("random", random), ("low entropy", structured)] {
                for parameters in [smallChunking, sparse] {
                    let digest = chunked(data, parameters: parameters, pieces: [65_536])
                    let ends = digest.chunks?.map { Int($0.end) } ?? []
                    #expect(ends == referenceChunkEnds(data, parameters: parameters), "\(label), kernel \(kernel)")
                    #expect(ends.count >= (parameters == sparse ? 3 : 100), "\(label): \(ends.count) chunks")
                }
            }
        }
        // The standard parameters, on a few MiB.
        let large = generator.bytes(9 * Self.mebibyte)
        let digest = chunked(large)
        #expect(digest.chunks?.map { Int($0.end) } == referenceChunkEnds(large, parameters: .standard))
    }

    @Test("the kernels agree on every cut of a 24 MiB file")
    func kernelsAgree() {
        var generator = SeededBytes(seed: 42)
        let data = generator.bytes(24 * Self.mebibyte)
        let fast = chunked(data)
        #expect((fast.chunks?.count ?? 0) > 10)
        for kernel in ChunkingKernel.available {
            ChunkingKernel.force(kernel)
            #expect(chunked(data) == fast, "kernel \(kernel)")
            ChunkingKernel.force(nil)
        }
    }

    @Test("every kernel finds the first match of a range, for dense and sparse masks")
    func kernelSearch() {
        var generator = SeededBytes(seed: 48)
        // Runs of 0xD2, whose table entry has 12 low zero bits (every position there passes
        // the vector filters), of 0x35 (8 low zero bits), and the two alternating: the
        // vector kernel hands such blocks to the byte loop.
        let runs = [UInt8](repeating: 0xD2, count: 20_000) + [UInt8](repeating: 0x35, count: 20_000)
            + (0..<20_000).map { $0 % 3 == 0 ? 0x35 : 0xD2 }
        let data = generator.bytes(300_000) + lowEntropyBytes(100_000) + runs + generator.bytes(10_000)
        let table = ChunkingParameters.gearTable
        data.withUnsafeBufferPointer { bytes in
            #expect(table[0xD2] & 0xFFF == 0 && table[0x35] & 0xFF == 0)
            for mask: UInt64 in [
                0x8000_0000_0000_00FF, 0x0000_0000_0000_0FFF, 0x8400_0000_0000_FFFF, 0x0000_0000_0000_0F0F,
                ChunkingParameters.standard.strictMask, ChunkingParameters.standard.looseMask,
            ] {
                var ranges: [(Int, Int)] = [(64, bytes.count), (64, 64), (100, 101)]
                for start in stride(from: 64, to: bytes.count, by: 7_919) {
                    ranges.append((start, min(bytes.count, start + (start * 31) % 70_000)))
                }
                expectEveryKernelFindsTheFirstMatch(bytes, mask: mask, in: ranges)
            }
        }
    }

    /// Checks `pkg_gear_find` with every kernel against the reference — the first position
    /// of each range whose rolling hash (over one pass of `bytes`) passes `mask`, or the
    /// range's end.
    func expectEveryKernelFindsTheFirstMatch(_ bytes: UnsafeBufferPointer<UInt8>, mask: UInt64, in ranges: [(Int, Int)]) {
        let table = ChunkingParameters.gearTable
        var hash: UInt64 = 0
        var matches: [Int] = []
        for index in bytes.indices {
            hash = (hash << 1) &+ table[Int(bytes[index])]
            if index >= 64 && hash & mask == 0 { matches.append(index) }
        }
        for kernel in ChunkingKernel.available {
            ChunkingKernel.force(kernel)
            defer { ChunkingKernel.force(nil) }
            for (from, to) in ranges {
                let expected = matches.first { $0 >= from && $0 < to } ?? to
                let found = pkg_gear_find(bytes.baseAddress!, from, to, mask)
                #expect(found == expected, "kernel \(kernel), mask \(String(mask, radix: 16)), [\(from), \(to))")
            }
        }
    }

    /// `pkg_gear_find` skips a block of positions whose windows hold only zeros when the
    /// hash of such a window fails the mask (a file's holes): the positions it finds must be
    /// the byte loop's, at every run length around the 64-byte window and the skipped block.
    @Test("runs of zeros: every kernel finds the first match of a range, whether or not a zero window can match")
    func zeroRuns() {
        var generator = SeededBytes(seed: 49)
        var data = generator.bytes(1_000)
        for length in [1, 62, 63, 64, 65, 127, 4_096, 65_535, 65_536, 65_600, 131_135, 200_000] {
            data += [UInt8](repeating: 0, count: length)
            data += generator.bytes(length % 7 + 1)
        }
        data += [UInt8](repeating: 0, count: 140_000)
        let table = ChunkingParameters.gearTable
        let zeroWindow = 0 &- table[0]
        let standard = ChunkingParameters.standard
        #expect(zeroWindow & standard.strictMask != 0 && zeroWindow & standard.looseMask != 0)
        // A mask that the zero window's hash passes: no block may be skipped then.
        let passedByZeros = ~zeroWindow & 0x0000_0000_0000_0F0F
        #expect(passedByZeros != 0)
        data.withUnsafeBufferPointer { bytes in
            for mask: UInt64 in [standard.strictMask, standard.looseMask, 0x0000_0000_0000_0FFF, 0x8000_0000_0000_00FF, passedByZeros] {
                var ranges: [(Int, Int)] = [(64, bytes.count), (1_001, bytes.count), (bytes.count - 70_000, bytes.count)]
                for start in stride(from: 64, to: bytes.count, by: 9_973) {
                    ranges.append((start, min(bytes.count, start + (start * 37) % 300_000)))
                }
                expectEveryKernelFindsTheFirstMatch(bytes, mask: mask, in: ranges)
            }
        }
    }

    @Test("cut points do not depend on how the bytes are split", arguments: [
        [1], [3], [63], [64], [65], [255, 1, 4096], [1000], [4096], [65_536], [7, 130, 64, 1, 9999],
    ])
    func splitIndependence(pieces: [Int]) {
        var generator = SeededBytes(seed: 43)
        for data in [generator.bytes(200_000), lowEntropyBytes(200_000)] {
            let whole = chunked(data, parameters: smallChunking, pieces: [data.count])
            let split = chunked(data, parameters: smallChunking, pieces: pieces)
            #expect(split == whole, "pieces \(pieces)")
        }
    }

    @Test("the file hash is XXH3-128 of the whole, each chunk's hash that of its bytes, bounds respected")
    func hashesAndBounds() throws {
        var generator = SeededBytes(seed: 44)
        for (parameters, data) in [
            (smallChunking, generator.bytes(300_000)), (smallChunking, lowEntropyBytes(300_000)),
            (ChunkingParameters.standard, generator.bytes(20 * Self.mebibyte + 12_345)),
        ] {
            let digest = chunked(data, parameters: parameters, pieces: [100_003])
            #expect(digest.hash == ContentHash.of(data))
            #expect(digest.size == Int64(data.count))
            let chunks = try #require(digest.chunks)
            #expect(ChunkList.isContiguous(chunks.chunks) && chunks.totalLength == Int64(data.count))
            for (index, chunk) in chunks.enumerated() {
                #expect(chunk.hash == ContentHash.of(data[Int(chunk.offset)..<Int(chunk.end)]))
                #expect(chunk.length <= Int64(parameters.maximumSize))
                if index < chunks.count - 1 { #expect(chunk.length >= Int64(parameters.minimumSize)) }
            }
        }
    }

    @Test("chunks of random data average about 1 MiB and stay within 256 KiB … 4 MiB")
    func sizeDistribution() throws {
        var generator = SeededBytes(seed: 45)
        let data = generator.bytes(64 * Self.mebibyte)
        let chunks = try #require(chunked(data).chunks)
        let interior = chunks.dropLast()
        let mean = Double(chunks.totalLength) / Double(chunks.count)
        #expect(mean >= 0.9 * Double(Self.mebibyte) && mean <= 1.25 * Double(Self.mebibyte), "mean \(mean)")
        #expect(interior.allSatisfy { $0.length >= 256 << 10 && $0.length <= 4 << 20 })
    }

    @Test("files below the threshold get no chunk list; at the threshold they do")
    func threshold() throws {
        var generator = SeededBytes(seed: 46)
        let data = generator.bytes(4 * Self.mebibyte + 1)
        #expect(chunked(Array(data.prefix(4 * Self.mebibyte - 1))).chunks == nil)
        #expect(chunked(Array(data.prefix(4 * Self.mebibyte))).chunks?.totalLength == Int64(4 * Self.mebibyte))
        #expect(chunked(data).chunks?.totalLength == Int64(4 * Self.mebibyte + 1))
        #expect(chunked([]).chunks == nil && chunked([]).hash == .empty)

        let directory = try TemporaryDirectory("chunk-threshold")
        for size in [0, 4 * Self.mebibyte - 1, 4 * Self.mebibyte, 4 * Self.mebibyte + 1] {
            let path = directory.url("file-\(size)")
            try Files.write(path, Array(data.prefix(size)))
            let (digest, status) = try ContentHash.ofFileWithChunks(atPath: path, buffer: ChunkBuffer())
            #expect(digest == chunked(Array(data.prefix(size))), "size \(size)")
            #expect(digest.hash == (try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer()).hash))
            #expect(status.size == Int64(size))
            // A size known to be below the threshold skips the search.
            let file = try FileDescriptor.open(path)
            var chunker = ChunkingHasher()
            let told = try ContentHash.ofFileWithChunks(file, buffer: ChunkBuffer(), expectedSize: Int64(size), chunker: &chunker)
            #expect(told == digest)
        }
    }
}

/// Whether two buffers hold the same bytes in `range` (memcmp: element-wise comparison
/// of large arrays is slow in debug builds).
func sameBytes(_ first: [UInt8], _ second: [UInt8], _ range: Range<Int>) -> Bool {
    first.withUnsafeBytes { a in
        second.withUnsafeBytes { b in range.isEmpty || memcmp(a.baseAddress! + range.lowerBound, b.baseAddress! + range.lowerBound, range.count) == 0 }
    }
}

@Suite("Comparing chunk lists")
struct ChunkComparisonTests {
    static let mebibyte = 1 << 20
    static let base: [UInt8] = {
        var generator = SeededBytes(seed: 47)
        return generator.bytes(64 * mebibyte)
    }()
    static let baseChunks = chunked(base).chunks!

    func compare(_ edited: [UInt8]) throws -> ChunkComparison {
        ChunkComparison(old: Self.baseChunks, new: try #require(chunked(edited).chunks))
    }

    @Test("identical files: nothing to write")
    func identical() throws {
        let comparison = try compare(Self.base)
        #expect(comparison.isIdentical && comparison.changedRanges.isEmpty && comparison.changedBytes == 0)
        #expect(comparison.newBytes == 0 && comparison.patchPays())
    }

    @Test("one byte inserted at the start: one or two new chunks, the rest moved")
    func insertionAtStart() throws {
        let comparison = try compare([0x5A] + Self.base)
        let new = comparison.statuses.count { $0 == .new }
        #expect(new >= 1 && new <= 2, "\(new) new chunks")
        #expect(comparison.newBytes <= 8 << 20)
        // In place every later byte moved: a patch would rewrite the file.
        #expect(comparison.changedRanges == [0..<Int64(Self.base.count + 1)])
        #expect(!comparison.patchPays())
    }

    @Test("1 MiB overwritten at arbitrary offsets: about two chunks change, only around the edit")
    func overwrite() throws {
        var generator = SeededBytes(seed: 48)
        let base = generator.bytes(24 * Self.mebibyte)
        let baseChunks = try #require(chunked(base).chunks)
        var counts: [Int] = []
        for index in 0..<10 {
            let start = Int(generator.next() % UInt64(base.count - Self.mebibyte))
            var edited = base
            edited.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[start..<start + Self.mebibyte])) }
            let comparison = ChunkComparison(old: baseChunks, new: try #require(chunked(edited).chunks))
            counts.append(comparison.changedChunkCount)
            // 10,000 seeded trials of this rule (Specs/hashing.md): 2.2 chunks on average,
            // 3 or fewer in 90 %, 4 or fewer in 99 %; an unlucky offset takes a few more.
            #expect(comparison.changedChunkCount <= 8, "edit \(index) at \(start)")
            #expect(comparison.changedRanges.count == 1)
            let range = try #require(comparison.changedRanges.first)
            #expect(range.lowerBound <= Int64(start) && range.upperBound >= Int64(start + Self.mebibyte))
            #expect(comparison.patchPays())
            // Everything outside the range is byte for byte the old file.
            let (low, high) = (Int(range.lowerBound), Int(range.upperBound))
            #expect(sameBytes(edited, base, 0..<low) && sameBytes(edited, base, high..<base.count))
        }
        #expect(Double(counts.reduce(0, +)) / Double(counts.count) <= 3, "\(counts)")
    }

    @Test("appending changes only the tail; truncating only the new last chunk")
    func appendAndTruncate() throws {
        var generator = SeededBytes(seed: 49)
        let appended = try compare(Self.base + generator.bytes(3 * Self.mebibyte))
        let lastOld = try #require(Self.baseChunks.last)
        #expect(appended.changedRanges.count == 1)
        #expect((appended.changedRanges.first?.lowerBound ?? 0) >= lastOld.offset)
        #expect(appended.statuses.prefix(Self.baseChunks.count - 1).allSatisfy { $0 == .unchanged })

        let truncated = try compare(Array(Self.base.prefix(Self.base.count - 3 * Self.mebibyte - 17)))
        #expect(truncated.changedChunkCount <= 1)
        #expect(truncated.newSize == Int64(Self.base.count - 3 * Self.mebibyte - 17))
    }
}
