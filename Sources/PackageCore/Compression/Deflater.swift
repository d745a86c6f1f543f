import CZlib

/// A deflate compressor reused across entries and chunks: raw for ZIP's parallel pieces,
/// zlib-framed for whole buffers (`compressed`).
///
/// Owns zlib's state (about 268 KiB at the default memory level); non-copyable so it is
/// freed exactly once. Not thread-safe: one per worker.
package struct Deflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>
    package let level: Int32

    /// A compressor at `level` (0–9) with a 32 KiB window, memory level 8 and the default
    /// strategy: what `compress2` uses, so a zlib-framed buffer gets the bytes it would.
    package init(level: Int, framing: DeflateFraming) {
        self.level = Int32(level)
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream, Int32(level), Z_DEFLATED, framing.windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
            Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib deflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
    }

    /// The most bytes `compress` can produce for `count` input bytes, with margin for a sync
    /// flush and zlib's framing. ZIP decides ZIP64 from it (Specs/zip.md): keep it stable.
    package static func bound(_ count: Int) -> Int { count + count / 1000 + count / 16384 * 5 + 64 }

    /// Compresses `input` as one piece of a deflate stream into `output`.
    ///
    /// - Parameters:
    ///   - dictionary: the 32 KiB of input that precede this piece, when it continues a
    ///     stream compressed in parallel pieces (pigz's method; raw framing only).
    ///   - final: whether this piece ends the stream; otherwise it ends with a sync flush
    ///     (byte-aligned, no final block), so that the next piece can follow it directly.
    /// - Returns: the bytes written, or nil when `output` was too small.
    package mutating func compress(
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

    /// Starts a stream fed piece by piece (`append`), whose output is never held whole here.
    package mutating func beginStream() { deflateReset(stream) }

    /// Feeds `input` to the stream begun by `beginStream`, handing what it produces to
    /// `output` in pieces of at most 64 KiB; `final` ends the stream. The stream's bytes are
    /// those of one `compress` of all the input at once.
    package mutating func append(
        _ input: UnsafeRawBufferPointer, final: Bool, to output: (UnsafeRawBufferPointer) -> Void
    ) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        withUnsafeTemporaryAllocation(byteCount: 64 << 10, alignment: 16) { scratch in
            while true {
                stream.pointee.next_out = scratch.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.pointee.avail_out = uInt(scratch.count)
                let status = deflate(stream, final ? Z_FINISH : Z_NO_FLUSH)
                // Z_BUF_ERROR: no progress possible, which only means all input was taken.
                precondition(
                    status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR, "zlib deflate failed (\(status))")
                let produced = scratch.count - Int(stream.pointee.avail_out)
                if produced > 0 { output(UnsafeRawBufferPointer(rebasing: scratch[..<produced])) }
                if final ? status == Z_STREAM_END : stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { break }
            }
        }
    }

    /// `bytes` compressed whole as one stream, as `compress2` would at the same level.
    ///
    /// - Complexity: O(n); memory about the input's size again (zlib's worst case).
    package static func compressed(_ bytes: [UInt8], level: Int, framing: DeflateFraming) -> [UInt8] {
        var deflater = Deflater(level: level, framing: framing)
        var output = [UInt8](repeating: 0, count: bound(bytes.count))
        let produced = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { deflater.compress(input, dictionary: nil, final: true, into: $0) }
        }
        // `bound` exceeds zlib's own deflateBound for one Z_FINISH, framing included.
        guard let produced else { preconditionFailure("zlib wrote more than its bound for \(bytes.count) bytes") }
        output.removeSubrange(produced...)
        return output
    }
}
