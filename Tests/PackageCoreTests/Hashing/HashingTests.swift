import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("Content hashes agree with xxhsum -H2")
struct HashingTests {
    static let mebibyte = 1 << 20
    /// Boundary sizes around the 1 MiB chunk, then a few seeded random sizes up to 100 MiB.
    static let sizes: [Int] = {
        var generator = SeededBytes(seed: 2026)
        let random = (0..<3).map { _ in Int(generator.next() % UInt64(100 * mebibyte)) }
        return [0, 1, 15, 16, 17, 128, 240, 241, mebibyte - 1, mebibyte, mebibyte + 1, 100 * mebibyte] + random
    }()

    @Test("file hash equals xxhsum -H2", arguments: sizes)
    func fileHashMatchesXXHSum(size: Int) throws {
        let xxhsum = try #require(which("xxhsum"), "xxhsum is installed by Scripts/test")
        let directory = try TemporaryDirectory("hash")
        let path = directory.url("file-\(size).bin")
        try Files.writeRandom(path, size: size, seed: UInt64(size))
        let (hash, status) = try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer())
        #expect(status.size == Int64(size))
        let result = try runProgram(xxhsum, ["-H2", path])
        #expect(result.status == 0)
        #expect(result.output == "\(hash)  \(path)\n", "size \(size)")
    }

    @Test("AVX2 and portable kernels give identical digests")
    func kernelsAgree() throws {
        var generator = SeededBytes(seed: 7)
        let sizes = [0, 1, 63, 64, 65, 1023, 1024, 1025, 100_000, 3 * Self.mebibyte + 17]
        for size in sizes {
            let bytes = generator.bytes(size)
            let fast = bytes.withUnsafeBytes { ContentHash.of($0) }
            HashKernel.forcePortable(true)
            let portable = bytes.withUnsafeBytes { ContentHash.of($0) }
            let streamedPortable = streamed(bytes, chunk: 4099)
            HashKernel.forcePortable(false)
            let streamedFast = streamed(bytes, chunk: 65_537)
            #expect(fast == portable, "size \(size)")
            #expect(fast == streamedPortable, "size \(size)")
            #expect(fast == streamedFast, "size \(size)")
        }
    }

    private func streamed(_ bytes: [UInt8], chunk: Int) -> ContentHash {
        let hasher = ContentHasher()
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + chunk)
            hasher.update(bytes[offset..<end])
            offset = end
        } while offset < bytes.count
        return hasher.digest()
    }

    @Test("hex round-trips and rejects malformed input")
    func hexRoundTrip() {
        let hash = ContentHash.of(Array("pkgtool".utf8))
        #expect(ContentHash(hex: hash.description) == hash)
        #expect(ContentHash(hex: hash.description.uppercased()) == hash)
        #expect(ContentHash(hex: "xyz") == nil)
        #expect(ContentHash(hex: String(repeating: "g", count: 32)) == nil)
        #expect(ContentHash.empty.description == "99aa06d3014798d86001c324468d497f")
    }

    @Test("reads survive partial transfers and EINTR")
    func stutteringReads() throws {
        let directory = try TemporaryDirectory("stutter")
        let path = directory.url("data")
        try Files.writeRandom(path, size: 3 * Self.mebibyte + 5, seed: 11)
        let expected = try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer()).hash
        let stuttered = try IOFaultInjection.withInjector(StutteringIO()) {
            try ContentHash.ofFile(atPath: path, buffer: ChunkBuffer()).hash
        }
        #expect(stuttered == expected)
    }
}
