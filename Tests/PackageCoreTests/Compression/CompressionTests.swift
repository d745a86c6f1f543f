import PackageTestSupport
import Testing

@testable import PackageCore

@Suite("Compression: the one zlib wrapper's bounds (ZIP and remote manifests)")
struct CompressionTests {
    static let body = (0..<1000).map { UInt8(truncatingIfNeeded: $0 * 7 % 13) }

    @Test("a whole buffer round-trips in both framings, empty included")
    func roundTrip() throws {
        var random = SeededBytes(seed: 3)
        let noise = random.bytes(100_000)
        for framing in [DeflateFraming.raw, .zlib] {
            for input in [Self.body, [], noise] {
                let compressed = Deflater.compressed(input, level: 6, framing: framing)
                #expect(try Inflater.inflated(compressed[...], size: input.count, framing: framing) == input)
            }
        }
        // The framings differ: zlib's 2-byte header (0x78 0x9C at level 6) and Adler-32.
        let zlib = Deflater.compressed(Self.body, level: 6, framing: .zlib)
        let raw = Deflater.compressed(Self.body, level: 6, framing: .raw)
        #expect(Array(zlib.prefix(2)) == [0x78, 0x9C])
        #expect(Array(zlib.dropFirst(2).dropLast(4)) == raw)
    }

    @Test("a stream fed in pieces gives the bytes of one whole compression, in both framings")
    func streamedPiecesMatchOneCompression() throws {
        var random = SeededBytes(seed: 5)
        // Noise and repetition, across several of the stream's 64 KiB output pieces.
        let input = random.bytes(300_000) + Array(repeating: Self.body, count: 200).flatMap { $0 }
        for framing in [DeflateFraming.raw, .zlib] {
            for pieceSize in [4_099, 65_536, input.count] {
                var deflater = Deflater(level: 6, framing: framing)
                deflater.beginStream()
                var output: [UInt8] = []
                var start = 0
                repeat {
                    let end = min(input.count, start + pieceSize)
                    input[start..<end].withUnsafeBytes { piece in
                        deflater.append(piece, final: end == input.count) { output.append(contentsOf: $0) }
                    }
                    start = end
                } while start < input.count
                #expect(output == Deflater.compressed(input, level: 6, framing: framing), "pieces of \(pieceSize)")
                #expect(try Inflater.inflated(output[...], size: input.count, framing: framing) == input)
            }
        }
        // An empty stream is a valid empty one.
        var deflater = Deflater(level: 6, framing: .zlib)
        deflater.beginStream()
        var empty: [UInt8] = []
        deflater.append(UnsafeRawBufferPointer(start: nil, count: 0), final: true) { empty.append(contentsOf: $0) }
        #expect(empty == Deflater.compressed([], level: 6, framing: .zlib))
    }

    @Test("a claimed size is not believed: too large, too small, truncated, trailing bytes, garbage")
    func claimsAreChecked() {
        let compressed = Deflater.compressed(Self.body, level: 6, framing: .zlib)
        func reason(_ bytes: ArraySlice<UInt8>, _ size: Int, _ framing: DeflateFraming = .zlib) -> String? {
            do {
                _ = try Inflater.inflated(bytes, size: size, framing: framing)
                return nil
            } catch {
                return error.reason
            }
        }
        // A terabyte claimed: nothing is allocated from it, and the short stream fails.
        #expect(reason(compressed[...], 1 << 40) == "it inflates to 1000 bytes, its container says 1099511627776")
        #expect(reason(compressed[...], 999) == "it inflates to 1000 bytes, its container says 999")
        #expect(reason(compressed[...], 998) == "it inflates past its declared 998 bytes")
        #expect(reason(compressed.dropLast(), 1000) == "the stream is truncated")
        #expect(reason(compressed[...] + [0], 1000) == "bytes follow the end of its stream")
        #expect(reason(compressed[...], -1) == "its declared size -1 is out of range")
        #expect(reason(compressed[...], Int.max) == "its declared size \(Int.max) is out of range")
        #expect(reason([0xFF, 0xFF, 0xFF, 0xFF][...], 10)?.hasPrefix("invalid deflate data") == true)
        // The wrong framing is corrupt data, not a trap.
        #expect(reason(compressed[...], 1000, .raw)?.hasPrefix("invalid deflate data") == true)
        #expect(reason([][...], 0) == "the stream is truncated")
    }

    @Test("a bomb stops at the claim plus one byte")
    func bombIsBounded() {
        // 64 MiB of zeros deflate to about 64 KiB; claimed as 100 bytes, inflation stops at 101.
        let bomb = Deflater.compressed([UInt8](repeating: 0, count: 64 << 20), level: 9, framing: .zlib)
        #expect(bomb.count < 100_000)
        #expect(throws: InflateError(reason: "it inflates past its declared 100 bytes")) {
            try Inflater.inflated(bomb[...], size: 100, framing: .zlib)
        }
    }

    @Test("pieces deflated apart, each primed with the 32 KiB before it, inflate as one raw stream")
    func parallelPieces() throws {
        let input = (0..<300_000).map { UInt8(truncatingIfNeeded: ($0 / 3) % 251) }
        var deflater = Deflater(level: 6, framing: .raw)
        var stream: [UInt8] = []
        let piece = 100_000
        var output = [UInt8](repeating: 0, count: Deflater.bound(piece))
        for start in stride(from: 0, to: input.count, by: piece) {
            let end = min(start + piece, input.count)
            let produced = input.withUnsafeBytes { all in
                output.withUnsafeMutableBytes { out in
                    let dictionary = UnsafeRawBufferPointer(rebasing: all[max(0, start - 32_768)..<start])
                    return deflater.compress(
                        UnsafeRawBufferPointer(rebasing: all[start..<end]), dictionary: dictionary,
                        final: end == input.count, into: out)
                }
            }
            stream += output.prefix(try #require(produced))
        }
        #expect(try Inflater.inflated(stream[...], size: input.count, framing: .raw) == input)
    }

    @Test("fields read while inflating, across window edges; every claim checked at the end")
    func readingWhileInflating() throws {
        var random = SeededBytes(seed: 5)
        let noise = random.bytes(50_000)
        let compressed = Deflater.compressed(noise, level: 6, framing: .zlib)
        // A 4 KiB window: fields of 1 to 3,000 bytes straddle its edge again and again.
        var read: [UInt8] = []
        try Inflater.reading(compressed[...], size: noise.count, framing: .zlib, window: 4096) { reader in
            var length = 1
            while reader.remaining > 0 {
                let take = min(length, reader.remaining)
                read += Array(try reader.bytes(take))
                length = length * 7 % 3001 + 1
            }
        }
        #expect(read == noise)
        // Integers are little-endian, wherever they fall.
        let numbers = Deflater.compressed([1, 0, 0, 0, 2, 0], level: 6, framing: .zlib)
        let pair = try Inflater.reading(numbers[...], size: 6, framing: .zlib, window: 16) { reader in
            (try reader.read(UInt32.self), try reader.read(UInt16.self))
        }
        #expect(pair == (1, 2))

        func reason(_ bytes: ArraySlice<UInt8>, _ size: Int, reading count: Int) -> String? {
            do {
                try Inflater.reading(bytes, size: size, framing: .zlib, window: 4096) { reader in
                    var left = count
                    while left > 0 {
                        let take = min(left, 1000)
                        _ = try reader.bytes(take)
                        left -= take
                    }
                }
                return nil
            } catch let error as InflateError {
                return error.reason
            } catch {
                return "\(error)"
            }
        }
        let body = Deflater.compressed(Self.body, level: 6, framing: .zlib)
        #expect(reason(body[...], 1000, reading: 1000) == nil)
        // A terabyte claimed: a 4 KiB window, and the short stream is refused.
        #expect(reason(body[...], 1 << 40, reading: 2000) == "it inflates to 1000 bytes, its container says 1099511627776")
        #expect(reason(body[...], 1 << 40, reading: 1000) == "1099511626776 of its declared 1099511627776 bytes were not read")
        // Fewer bytes claimed than the stream holds: refused as soon as it inflates past them.
        #expect(reason(body[...], 999, reading: 999) == "it inflates past its declared 999 bytes")
        // Reading past the claim, bytes after the stream, a cut stream.
        #expect(reason(body[...], 1000, reading: 1001) == "its fields run past the 1000 bytes its container states")
        #expect(reason((body + [0])[...], 1000, reading: 1000) == "bytes follow the end of its stream")
        #expect(reason(body.dropLast(5), 1000, reading: 1000) == "the stream is truncated")
        #expect(reason(body[...], 1000, reading: 10) == "990 of its declared 1000 bytes were not read")
    }

    @Test("a stream given in pieces of any size reads as the whole; the end is checked across pieces")
    func readingPieces() throws {
        var random = SeededBytes(seed: 9)
        let noise = random.bytes(30_000)
        let compressed = Deflater.compressed(noise, level: 6, framing: .zlib)
        /// Reads `input` handed over `piece` bytes at a time (a last empty piece where `trailing` bytes follow).
        func read(_ input: [UInt8], piece: Int, size: Int) throws -> [UInt8] {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 1)
            defer { buffer.deallocate() }
            var position = 0
            return try Inflater.reading(
                pieces: {
                    guard position < input.count else { return nil }
                    let count = min(piece, input.count - position)
                    input[position..<position + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
                    position += count
                    return UnsafeRawBufferPointer(rebasing: buffer[..<count])
                }, size: size, framing: .zlib, window: 4096
            ) { reader in
                var read: [UInt8] = []
                while reader.remaining > 0 { read += Array(try reader.bytes(min(777, reader.remaining))) }
                return read
            }
        }
        for piece in [1, 7, 4096, 1 << 20] {
            #expect(try read(compressed, piece: piece, size: noise.count) == noise, "pieces of \(piece)")
            // Bytes after the stream, in the same piece or a later one; a cut stream.
            #expect(throws: InflateError.self, "pieces of \(piece)") { try read(compressed + [0], piece: piece, size: noise.count) }
            #expect(throws: InflateError.self, "pieces of \(piece)") { try read(Array(compressed.dropLast(3)), piece: piece, size: noise.count) }
        }
    }
}
