import CZlib

/// CRC-32 (ISO-HDLC, the ZIP and gzip checksum), computed by zlib.
package enum CRC32 {
    /// The CRC of `bytes`, continuing from `crc` (0 to start).
    @inline(__always)
    package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(uLong(crc), base.assumingMemoryBound(to: Bytef.self), bytes.count))
    }

    /// The CRC of the concatenation of A and B, from CRC(A), CRC(B) and B's length.
    package static func combine(_ first: UInt32, _ second: UInt32, secondLength: Int64) -> UInt32 {
        UInt32(truncatingIfNeeded: crc32_combine(uLong(first), uLong(second), Int(secondLength)))
    }

    package static func of(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { update(0, $0) } }
}

/// A raw-deflate compressor (no zlib or gzip wrapper) reused across entries and chunks.
///
/// Owns zlib's state (about 268 KiB at the default memory level); non-copyable so it is
/// freed exactly once. Not thread-safe: one per worker.
struct Deflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>
    let level: Int32

    init(level: Int) {
        self.level = Int32(level)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream, Int32(level), Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib deflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// The most bytes `compress` can produce for `count` input bytes, with margin for a sync flush.
    static func bound(_ count: Int) -> Int { count + count / 1000 + count / 16384 * 5 + 64 }

    /// Compresses `input` as one piece of a raw deflate stream into `output`.
    ///
    /// - Parameters:
    ///   - dictionary: the 32 KiB of input that precede this piece, when it continues a
    ///     stream compressed in parallel pieces (pigz's method).
    ///   - final: whether this piece ends the stream; otherwise it ends with a sync flush
    ///     (byte-aligned, no final block), so that the next piece can follow it directly.
    /// - Returns: the bytes written, or nil when `output` was too small.
    mutating func compress(
        _ input: UnsafeRawBufferPointer, dictionary: UnsafeRawBufferPointer?, final: Bool,
        into output: UnsafeMutableRawBufferPointer
    ) -> Int? {
        deflateReset(stream)
        if let dictionary, dictionary.count > 0 {
            deflateSetDictionary(stream, dictionary.baseAddress!.assumingMemoryBound(to: Bytef.self), uInt(dictionary.count))
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let status = deflate(stream, final ? Z_FINISH : Z_SYNC_FLUSH)
        let produced = output.count - Int(stream.pointee.avail_out)
        if final { return status == Z_STREAM_END ? produced : nil }
        return status == Z_OK && stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 ? produced : nil
    }
}

/// A raw-inflate decompressor that never writes past what it is given and treats the end of
/// input before the end of the stream as corruption, never as a reason to wait or loop.
struct Inflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, -MAX_WBITS, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib inflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    func reset() { inflateReset(stream) }

    enum Step {
        /// Input consumed and output produced (either may be zero, not both).
        case progress(consumed: Int, produced: Int)
        /// The stream ended; `consumed` bytes of the input belonged to it.
        case end(consumed: Int, produced: Int)
        /// The data is not a valid deflate stream.
        case corrupt(String)
    }

    /// Inflates from `input` into `output` as far as either allows.
    func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Step {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let status = inflate(stream, Z_NO_FLUSH)
        let consumed = input.count - Int(stream.pointee.avail_in)
        let produced = output.count - Int(stream.pointee.avail_out)
        switch status {
        case Z_STREAM_END: return .end(consumed: consumed, produced: produced)
        case Z_OK: return .progress(consumed: consumed, produced: produced)
        case Z_BUF_ERROR:
            // No progress possible: with input left and room left it cannot happen, so the
            // caller sees zero progress and decides (truncated input, or output full).
            return .progress(consumed: consumed, produced: produced)
        case Z_MEM_ERROR: return .corrupt("out of memory inflating")
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
            return .corrupt("invalid deflate data (\(message))")
        }
    }
}
