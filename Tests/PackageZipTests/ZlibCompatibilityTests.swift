import CZlib
import PackageCore
import PackageTestSupport
import Testing

/// The one zlib wrapper (PackageCore's Deflater) against zlib called directly: a remote's
/// version manifests are named by the SHA-256 of their bytes, so their zlib stream must be
/// what `compress2` at level 6 wrote before the wrappers were one.
@Suite("zlib compatibility: Deflater's zlib framing is compress2's bytes")
struct ZlibCompatibilityTests {
    static func compress2Bytes(_ input: [UInt8], level: Int32) -> [UInt8] {
        var capacity = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { compress2(out.baseAddress, &capacity, $0.baseAddress, uLong($0.count), level) }
        }
        precondition(status == Z_OK)
        return Array(output.prefix(Int(capacity)))
    }

    @Test("same bytes as compress2, text, random and empty input")
    func sameBytesAsCompress2() {
        var random = SeededBytes(seed: 11)
        let text = Array(String(repeating: "pages/1.json\u{1}\u{2}lorem ipsum ", count: 5000).utf8)
        for input in [text, random.bytes(70_000), [], [7]] {
            #expect(Deflater.compressed(input, level: 6, framing: .zlib) == Self.compress2Bytes(input, level: 6))
        }
    }

    @Test("CRC32 agrees with zlib's crc32 over pieces combined")
    func crcCombines() {
        var random = SeededBytes(seed: 12)
        let first = random.bytes(5000)
        let second = random.bytes(3000)
        let whole = CRC32.of(first + second)
        #expect(CRC32.combine(CRC32.of(first), CRC32.of(second), secondLength: 3000) == whole)
        #expect(whole == UInt32(crc32(0, first + second, uInt(8000))))
    }
}
