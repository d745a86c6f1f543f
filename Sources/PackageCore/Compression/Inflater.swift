import CZlib

/// An inflate decompressor that never writes past what it is given and treats the end of
/// input before the end of the stream as corruption, never as a reason to wait or loop.
///
/// Owns zlib's state; non-copyable so it is freed exactly once. Not thread-safe.
package struct Inflater: ~Copyable {
    private let stream: UnsafeMutablePointer<z_stream>

    package init(framing: DeflateFraming) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = inflateInit2_(stream, framing.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
        precondition(status == Z_OK, "zlib inflateInit2 failed (\(status)): out of memory")
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// Forgets the stream so far, to start another.
    package func reset() { inflateReset(stream) }

    /// What one call to `step` did.
    package enum Step {
        /// Input consumed and output produced (either may be zero; both zero means input
        /// ran out, or output is full).
        case progress(consumed: Int, produced: Int)
        /// The stream ended; `consumed` bytes of the input belonged to it.
        case end(consumed: Int, produced: Int)
        /// The data is not a valid deflate stream.
        case corrupt(String)
    }

    /// Inflates from `input` into `output` as far as either allows.
    package func step(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Step {
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
