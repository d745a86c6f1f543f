/// Reads the fields of a compressed body while it inflates, a window at a time: a decoder
/// of a large body (a remote version's entries) never holds the body whole, and what it
/// holds follows the bytes that inflated, never the size the container claims.
///
/// Made by `Inflater.reading(_:size:framing:window:_:)`, which keeps the input alive and
/// checks the end of the stream. The buffers `bytes(_:)` returns are valid until the next
/// read.
package struct InflatingReader: ~Copyable {
    private let inflater: Inflater
    /// The compressed bytes at hand: all of them, or the current piece of a stream read a
    /// piece at a time (`morePieces`).
    private var input: UnsafeRawBufferPointer
    private var consumed = 0
    /// The next piece of compressed input, nil once there is none; nil for input given whole.
    private let morePieces: (() throws -> UnsafeRawBufferPointer?)?
    private var piecesEnded = false
    private let window: UnsafeMutableRawBufferPointer
    /// The inflated bytes not yet read: `window[start..<end]`.
    private var start = 0
    private var end = 0
    private var produced = 0
    private var ended = false
    /// The size the container states; the stream must inflate to exactly this.
    private let declared: Int

    fileprivate init(
        input: UnsafeRawBufferPointer, morePieces: (() throws -> UnsafeRawBufferPointer?)? = nil, declared: Int,
        framing: DeflateFraming, window: Int
    ) {
        inflater = Inflater(framing: framing)
        self.input = input
        self.morePieces = morePieces
        self.declared = declared
        self.window = .allocate(byteCount: window, alignment: 16)
    }

    deinit { window.deallocate() }

    /// The bytes of the declared size not read yet: what a decoder may weigh a stated count
    /// against (the stream is refused unless it inflates to exactly the declared size).
    package var remaining: Int { declared - (produced - (end - start)) }

    /// The next `count` bytes (at most the window's size), valid until the next read.
    @inline(__always)
    package mutating func bytes(_ count: Int) throws(InflateError) -> UnsafeRawBufferPointer {
        if end - start < count { try fill(count) }
        let slice = UnsafeRawBufferPointer(rebasing: window[start..<start + count])
        start += count
        return slice
    }

    /// The next little-endian integer.
    @inline(__always)
    package mutating func read<T: FixedWidthInteger>(_: T.Type) throws(InflateError) -> T {
        let size = MemoryLayout<T>.size
        if end - start < size { try fill(size) }
        let value = UnsafeRawBufferPointer(window).loadUnaligned(fromByteOffset: start, as: T.self)
        start += size
        return T(littleEndian: value)
    }

    /// The next 16-byte content hash.
    package mutating func hash() throws(InflateError) -> ContentHash {
        ContentHash(canonicalBytes: try bytes(16))
    }

    /// Inflates until `count` bytes are unread, moving what is unread to the window's start.
    private mutating func fill(_ count: Int) throws(InflateError) {
        guard count >= 0, count <= remaining else {
            throw InflateError(reason: "its fields run past the \(declared) bytes its container states")
        }
        guard count <= window.count else { throw InflateError(reason: "a field of \(count) bytes is too large") }
        if start > 0 {
            if end > start {
                UnsafeMutableRawBufferPointer(rebasing: window[0..<(end - start)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: window[start..<end]))
            }
            end -= start
            start = 0
        }
        while end - start < count {
            // The declared size bounds the output: one byte more, and the stream is too long.
            let room = min(window.count - end, declared + 1 - produced)
            try step(into: room)
        }
    }

    /// One call of the inflater into `room` bytes after `end`.
    private mutating func step(into room: Int) throws(InflateError) {
        guard !ended else { throw InflateError(reason: "it inflates to \(produced) bytes, its container says \(declared)") }
        if consumed == input.count { try nextPiece() }
        let outcome = inflater.step(
            UnsafeRawBufferPointer(rebasing: input[consumed...]),
            into: UnsafeMutableRawBufferPointer(rebasing: window[end..<end + room]))
        switch outcome {
        case .corrupt(let message): throw InflateError(reason: message)
        case .progress(let used, let made):
            consumed += used
            produced += made
            end += made
            // Room was given, so no progress means the input ended inside the stream.
            if used == 0 && made == 0 { throw InflateError(reason: "the stream is truncated") }
        case .end(let used, let made):
            consumed += used
            produced += made
            end += made
            ended = true
        }
        guard produced <= declared else { throw InflateError(reason: "it inflates past its declared \(declared) bytes") }
    }

    /// Moves to the next piece of a stream given in pieces (nothing for input given whole).
    private mutating func nextPiece() throws(InflateError) {
        guard let morePieces, !piecesEnded else { return }
        let piece: UnsafeRawBufferPointer?
        do { piece = try morePieces() } catch {
            throw InflateError(reason: "its bytes could not be read (\(error))")
        }
        guard let piece, !piece.isEmpty else {
            piecesEnded = true
            return
        }
        input = piece
        consumed = 0
    }

    /// Checks that every declared byte was read, the stream ended there, and its input too.
    fileprivate mutating func finish() throws(InflateError) {
        guard remaining == 0 else {
            throw InflateError(reason: "\(remaining) of its declared \(declared) bytes were not read")
        }
        start = 0
        end = 0
        while !ended { try step(into: 1) }
        if consumed == input.count { try nextPiece() }
        guard consumed == input.count else { throw InflateError(reason: "bytes follow the end of its stream") }
    }
}

extension Inflater {
    /// Inflates `bytes`, one whole stream that must give exactly `size` bytes and end
    /// exactly where `bytes` does, handing the output to `body` as it inflates.
    ///
    /// `size` is what the (untrusted) container claims: only `window` bytes are allocated,
    /// whatever it claims.
    /// - Throws: `InflateError` when the data is damaged, truncated, inflates to more or
    ///   fewer bytes than `size`, has bytes after its end, or `body` leaves bytes unread;
    ///   whatever `body` throws.
    /// - Complexity: O(output); memory: the window.
    package static func reading<Result>(
        _ bytes: ArraySlice<UInt8>, size: Int, framing: DeflateFraming, window: Int = 256 << 10,
        _ body: (inout InflatingReader) throws -> Result
    ) throws -> Result {
        guard size >= 0, size < Int.max else { throw InflateError(reason: "its declared size \(size) is out of range") }
        return try bytes.withUnsafeBytes { input in
            var reader = InflatingReader(input: input, declared: size, framing: framing, window: window)
            let result = try body(&reader)
            try reader.finish()
            return result
        }
    }

    /// `reading(_:size:framing:window:_:)` for a stream that arrives in pieces: `nextPiece`
    /// gives each in turn (valid until it is called again), nil at the end. A decoder of a
    /// large body read from a file holds one piece of it, not the whole compressed body.
    /// - Throws: as the whole-input variant; an error of `nextPiece` as an `InflateError`.
    package static func reading<Result>(
        pieces nextPiece: @escaping () throws -> UnsafeRawBufferPointer?, size: Int, framing: DeflateFraming,
        window: Int = 256 << 10, _ body: (inout InflatingReader) throws -> Result
    ) throws -> Result {
        guard size >= 0, size < Int.max else { throw InflateError(reason: "its declared size \(size) is out of range") }
        var reader = InflatingReader(
            input: UnsafeRawBufferPointer(start: nil, count: 0), morePieces: nextPiece, declared: size, framing: framing,
            window: window)
        let result = try body(&reader)
        try reader.finish()
        return result
    }
}
