import PackageCore

/// Streams one entry's data out of an archive, checking it on the way: never more bytes
/// than declared, exactly the declared count in the end, the deflate stream ending exactly
/// where the compressed data ends, the CRC-32 and, when present, our content hash.
///
/// Owns a 1 MiB input buffer, a 1 MiB output buffer, an inflate state and a hash state:
/// one per worker, reused for every entry. Not thread-safe.
final class EntryReader {
    let input = ChunkBuffer()
    let output = ChunkBuffer()
    private let inflater = Inflater(framing: .raw)
    private let hasher = ContentHasher()

    init() {}

    /// Reads `entry`, calling `sink` with each chunk of its uncompressed bytes (valid only
    /// during the call). Throws `ZipError` when the data does not check out.
    ///
    /// - Complexity: one `pread` per MiB of compressed data; memory is this reader's buffers.
    func read(
        _ entry: ZipEntry, file: borrowing FileDescriptor, archivePath: String,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var state = EntryReadState(entry, archivePath: archivePath)
        if state.checkHash { hasher.reset() }
        switch entry.method {
        case .stored:
            while state.position < state.end {
                let chunk = try readInput(&state, file: file)
                state.produced += Int64(chunk.count)
                try deliver(chunk, &state, sink: sink)
            }
        case .deflated where entry.compressedSize == 0 && entry.uncompressedSize == 0:
            break  // an empty entry some writers mark deflated without any stream
        case .deflated:
            inflater.reset()
            var ended = false
            while !ended {
                guard state.position < state.end else {
                    throw state.fail(.badData, "the deflate stream is truncated (its data ends before the stream does)")
                }
                ended = try inflate(try readInput(&state, file: file), &state, sink: sink)
            }
        case .other:
            throw state.fail(.unsupportedMethod, "compression method \(entry.method) is not supported")
        }
        try verify(state)
    }

    /// Reads the next chunk of the entry's compressed data (at most a buffer) into `input`;
    /// a file that ends before the data does is truncated.
    private func readInput(_ state: inout EntryReadState, file: borrowing FileDescriptor) throws -> UnsafeRawBufferPointer {
        let wanted = Int(min(Int64(input.count), state.end - state.position))
        let got = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: input.bytes[..<wanted]), at: state.position)
        guard got == wanted else { throw state.fail(.truncated, "the file ends inside the entry's data") }
        state.position += Int64(got)
        return UnsafeRawBufferPointer(rebasing: input.bytes[..<got])
    }

    /// Hands uncompressed bytes to `sink`, after adding them to the CRC-32 and hash.
    private func deliver(
        _ bytes: UnsafeRawBufferPointer, _ state: inout EntryReadState, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        state.crc = CRC32.update(state.crc, bytes)
        if state.checkHash { hasher.update(bytes) }
        try sink(bytes)
    }

    /// Inflates one chunk of input until it is used up or the stream ends, never past the
    /// declared size (plus one byte, to see an overrun). Returns whether the stream ended,
    /// which must be exactly where the compressed data ends.
    private func inflate(
        _ input: UnsafeRawBufferPointer, _ state: inout EntryReadState, sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        let entry = state.entry
        var pending = input
        while true {
            let room = Int(min(Int64(output.count), entry.uncompressedSize - state.produced + 1))
            let target = UnsafeMutableRawBufferPointer(rebasing: output.bytes[..<room])
            let consumed: Int
            let made: Int
            var ended = false
            switch inflater.step(pending, into: target) {
            case .corrupt(let message): throw state.fail(.badData, message)
            case .progress(let c, let m):
                consumed = c
                made = m
            case .end(let c, let m):
                consumed = c
                made = m
                ended = true
            }
            state.produced += Int64(made)
            if state.produced > entry.uncompressedSize {
                throw state.fail(.badData, "the data inflates past its declared size of \(entry.uncompressedSize) bytes")
            }
            pending = UnsafeRawBufferPointer(rebasing: pending[consumed...])
            if made > 0 { try deliver(UnsafeRawBufferPointer(rebasing: output.bytes[..<made]), &state, sink: sink) }
            if ended {
                if !pending.isEmpty || state.position < state.end {
                    throw state.fail(
                        .badData,
                        "the deflate stream ends before the entry's compressed data does (compressed size too large)")
                }
                return true
            }
            if consumed == 0 && made == 0 {
                if pending.isEmpty { return false }  // needs more input
                throw state.fail(.badData, "the deflate stream makes no progress (corrupt data)")
            }
        }
    }

    /// The checks once the data is read: exactly the declared size, the CRC-32, and our
    /// content hash when the entry carries one.
    private func verify(_ state: EntryReadState) throws {
        let entry = state.entry
        guard state.produced == entry.uncompressedSize else {
            throw state.fail(
                .badData, "the data inflates to \(state.produced) bytes, the header declares \(entry.uncompressedSize)")
        }
        guard state.crc == entry.crc32 else {
            throw state.fail(
                .crcMismatch,
                "CRC-32 mismatch: the data gives \(hex32(state.crc)), the header says \(hex32(entry.crc32)) (corrupt data)")
        }
        if let expected = entry.contentHash {
            let actual = hasher.digest()
            guard actual == expected else {
                throw state.fail(.hashMismatch, "content hash mismatch: the data gives \(actual), the header says \(expected)")
            }
        }
    }
}

/// One entry as `EntryReader` reads it: where its compressed data ends, how far the read
/// got, and the checks gathered on the way.
private struct EntryReadState {
    let entry: ZipEntry
    let archivePath: String
    /// Whether the entry carries our content hash, to check.
    let checkHash: Bool
    /// The end of the entry's compressed data in the archive.
    let end: Int64
    /// The next byte of compressed data to read.
    var position: Int64
    /// Uncompressed bytes delivered so far.
    var produced: Int64 = 0
    var crc: UInt32 = 0

    init(_ entry: ZipEntry, archivePath: String) {
        self.entry = entry
        self.archivePath = archivePath
        checkHash = entry.contentHash != nil
        position = entry.dataOffset
        end = entry.dataOffset + entry.compressedSize
    }

    /// The error for this entry.
    func fail(_ kind: ZipError.Kind, _ reason: String) -> ZipError {
        ZipError(kind, archive: archivePath, entry: entry.name, reason)
    }
}

func hex32(_ value: UInt32) -> String { String(value, radix: 16).leftPadded(to: 8) }
