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
        func fail(_ kind: ZipError.Kind, _ reason: String) -> ZipError {
            ZipError(kind, archive: archivePath, entry: entry.name, reason)
        }
        let checkHash = entry.contentHash != nil
        if checkHash { hasher.reset() }
        var crc: UInt32 = 0
        var produced: Int64 = 0
        var position = entry.dataOffset
        let end = entry.dataOffset + entry.compressedSize

        func deliver(_ bytes: UnsafeRawBufferPointer) throws {
            crc = CRC32.update(crc, bytes)
            if checkHash { hasher.update(bytes) }
            try sink(bytes)
        }

        func readInput() throws -> UnsafeRawBufferPointer {
            let wanted = Int(min(Int64(input.count), end - position))
            let got = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: input.bytes[..<wanted]), at: position)
            guard got == wanted else { throw fail(.truncated, "the file ends inside the entry's data") }
            position += Int64(got)
            return UnsafeRawBufferPointer(rebasing: input.bytes[..<got])
        }

        switch entry.method {
        case .stored:
            while position < end {
                let chunk = try readInput()
                produced += Int64(chunk.count)
                try deliver(chunk)
            }
        case .deflated where entry.compressedSize == 0 && entry.uncompressedSize == 0:
            break  // an empty entry some writers mark deflated without any stream
        case .deflated:
            inflater.reset()
            var ended = false
            while !ended {
                guard position < end else {
                    throw fail(.badData, "the deflate stream is truncated (its data ends before the stream does)")
                }
                var pending = try readInput()
                while !pending.isEmpty || !ended {
                    let room = Int(min(Int64(output.count), entry.uncompressedSize - produced + 1))
                    let target = UnsafeMutableRawBufferPointer(rebasing: output.bytes[..<room])
                    let consumed: Int
                    let made: Int
                    switch inflater.step(pending, into: target) {
                    case .corrupt(let message): throw fail(.badData, message)
                    case .progress(let c, let m):
                        consumed = c
                        made = m
                    case .end(let c, let m):
                        consumed = c
                        made = m
                        ended = true
                    }
                    produced += Int64(made)
                    if produced > entry.uncompressedSize {
                        throw fail(.badData, "the data inflates past its declared size of \(entry.uncompressedSize) bytes")
                    }
                    pending = UnsafeRawBufferPointer(rebasing: pending[consumed...])
                    if made > 0 { try deliver(UnsafeRawBufferPointer(rebasing: output.bytes[..<made])) }
                    if ended {
                        if !pending.isEmpty || position < end {
                            throw fail(
                                .badData,
                                "the deflate stream ends before the entry's compressed data does (compressed size too large)")
                        }
                        break
                    }
                    if consumed == 0 && made == 0 {
                        if pending.isEmpty { break }  // needs more input
                        throw fail(.badData, "the deflate stream makes no progress (corrupt data)")
                    }
                }
            }
        case .other:
            throw fail(.unsupportedMethod, "compression method \(entry.method) is not supported")
        }
        guard produced == entry.uncompressedSize else {
            throw fail(
                .badData, "the data inflates to \(produced) bytes, the header declares \(entry.uncompressedSize)")
        }
        guard crc == entry.crc32 else {
            throw fail(
                .crcMismatch,
                "CRC-32 mismatch: the data gives \(hex32(crc)), the header says \(hex32(entry.crc32)) (corrupt data)")
        }
        if let expected = entry.contentHash {
            let actual = hasher.digest()
            guard actual == expected else {
                throw fail(.hashMismatch, "content hash mismatch: the data gives \(actual), the header says \(expected)")
            }
        }
    }
}

func hex32(_ value: UInt32) -> String { String(value, radix: 16).leftPadded(to: 8) }
