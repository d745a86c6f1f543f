/// The one binary record format for state that must survive a crash (Specs/save.md,
/// "Records that survive a crash"): 8 bytes of magic, a u32 little-endian version, the
/// payload, then the XXH3-128 (`ContentHash.of`) of every byte before it.
///
/// The save journal and the manifest's base and delta files are each one frame; the pull
/// staging journal and the cache's pending packs are logs of frames (`ChecksummedLog`).
/// Bytes read back are hostile: lengths come from what arrived, never from a header.
package enum ChecksummedFrame {
    static let magicSize = 8
    /// Magic and version.
    package static let headerSize = magicSize + 4
    package static let checksumSize = 16

    /// Why bytes are not a frame; each caller says it in its own error.
    package enum Refusal: Error, Equatable, Sendable {
        /// Shorter than a frame (with the payload the caller requires) can be.
        case truncated
        /// Not the expected magic: another file altogether.
        case badMagic
        /// A version newer than the caller reads.
        case futureVersion(UInt32)
        /// The checksum does not match: damaged, or cut short.
        case checksumMismatch
    }

    /// A frame that passed: its version and payload (which points into the opened bytes).
    package struct Opened {
        package var version: UInt32
        package var payload: UnsafeRawBufferPointer
        package var checksum: ContentHash
    }

    /// Checks `bytes` is one whole frame of `magic`, of a version up to `highestVersion`,
    /// whose payload holds at least `minimumPayload` bytes; checked in that order, then the
    /// checksum.
    package static func open(
        _ bytes: UnsafeRawBufferPointer, magic: [UInt8], highestVersion: UInt32, minimumPayload: Int = 0
    ) throws(Refusal) -> Opened {
        let version = try openPrefix(
            bytes, magic: magic, highestVersion: highestVersion, minimumPayload: minimumPayload, frameSize: bytes.count)
        let end = bytes.count - checksumSize
        let checksum = ContentHash.of(UnsafeRawBufferPointer(rebasing: bytes[..<end]))
        guard checksum == ContentHash(canonicalBytes: UnsafeRawBufferPointer(rebasing: bytes[end...])) else {
            throw .checksumMismatch
        }
        return Opened(version: version, payload: UnsafeRawBufferPointer(rebasing: bytes[headerSize..<end]), checksum: checksum)
    }

    /// The checks of `open` that need only a frame's first `headerSize` bytes (`prefix`) and
    /// its size, in the same order, for a frame read a piece at a time whose reader checks
    /// the checksum at the end: its version.
    package static func openPrefix(
        _ prefix: UnsafeRawBufferPointer, magic: [UInt8], highestVersion: UInt32, minimumPayload: Int, frameSize: Int
    ) throws(Refusal) -> UInt32 {
        guard frameSize >= headerSize, prefix.count >= headerSize else { throw .truncated }
        guard prefix.prefix(magicSize).elementsEqual(magic) else { throw .badMagic }
        let version = UInt32(littleEndian: prefix.loadUnaligned(fromByteOffset: magicSize, as: UInt32.self))
        guard version <= highestVersion else { throw .futureVersion(version) }
        guard frameSize - headerSize - checksumSize >= minimumPayload else { throw .truncated }
        return version
    }

    /// One frame of `magic` and `version` around the payload `body` appends.
    package static func encode(
        magic: [UInt8], version: UInt32, capacity: Int = 0, _ body: (inout ByteWriter) -> Void
    ) -> [UInt8] {
        var frame = Writer(magic: magic, version: version, capacity: capacity)
        body(&frame.writer)
        frame.finish()
        return frame.writer.bytes
    }

    /// Writes a frame, whole or in pieces (a manifest of a million entries is never held
    /// whole): the caller appends the payload to `writer`, may hand what it holds to a
    /// sink with `flush`, and ends it with `finish`.
    package struct Writer: ~Copyable {
        /// The bytes not yet handed out: at first the header, then what the caller appends
        /// (offsets within it are the frame's until the first `flush`).
        package var writer: ByteWriter
        private let hasher = ContentHasher()

        package init(magic: [UInt8], version: UInt32, capacity: Int = 0) {
            precondition(magic.count == magicSize, "a frame's magic is 8 bytes")
            writer = ByteWriter(capacity: max(capacity, headerSize + checksumSize))
            writer.append(contentsOf: magic)
            writer.append(version)
        }

        /// Hands the bytes held to `sink` and empties `writer`.
        package mutating func flush(to sink: (UnsafeRawBufferPointer) throws -> Void) rethrows {
            writer.bytes.withUnsafeBytes { hasher.update($0) }
            try writer.bytes.withUnsafeBytes { try sink($0) }
            writer.removeAll()
        }

        /// Appends the checksum of the whole frame to `writer` (the frame's last bytes) and
        /// returns it.
        @discardableResult
        package mutating func finish() -> ContentHash {
            writer.bytes.withUnsafeBytes { hasher.update($0) }
            let checksum = hasher.digest()
            writer.append(checksum)
            return checksum
        }
    }
}

/// An append-only file of frames, each record one frame whose payload is a u32 length and
/// that many bytes: written with one `write` on an `O_APPEND` descriptor, so that
/// appenders, concurrent ones too, add whole records. Reading stops at the first record
/// that is torn (a crash cut it short), damaged, or foreign (another magic or a newer
/// version); what comes before it stands. Used for caches, which lose nothing but time
/// when a record is lost.
package enum ChecksummedLog {
    /// The smallest record: the frame's header, the length, the checksum.
    static let overhead = ChecksummedFrame.headerSize + 4 + ChecksummedFrame.checksumSize

    /// The bytes of one record holding `payload`.
    package static func record(magic: [UInt8], version: UInt32, payload: [UInt8]) -> [UInt8] {
        precondition(payload.count <= Int(UInt32.max), "a record's payload fits a u32 length")
        return ChecksummedFrame.encode(magic: magic, version: version, capacity: overhead + payload.count) { writer in
            writer.append(UInt32(payload.count))
            writer.append(contentsOf: payload)
        }
    }

    /// Appends `record` to `file` (open with `O_APPEND`) with one `write`: never two, which
    /// another appender's record could come between.
    /// - Throws: the write's error; a short write (a full disk) as an error too: the record
    ///   is then torn, and readers stop before it.
    package static func append(_ record: [UInt8], to file: borrowing FileDescriptor) throws(FileSystemError) {
        let result = record.withUnsafeBytes { bytes in
            Result { () throws(Errno) in try Syscall.write(file.rawValue, bytes, path: file.path) }
        }
        let written: Int
        switch result {
        case .success(let count): written = count
        case .failure(let error): throw FileSystemError(.write, path: file.path, errno: error)
        }
        guard written == record.count else {
            throw FileSystemError(.write, path: file.path, reason: "only \(written) of a record's \(record.count) bytes were written")
        }
    }

    /// Hands `body` the version and payload of each whole record at the start of `bytes`,
    /// in order, until a record is torn, damaged or foreign, or `body` returns false (a
    /// payload it cannot read). Returns the length of the records it accepted.
    @discardableResult
    package static func forEachRecord(
        in bytes: UnsafeRawBufferPointer, magic: [UInt8], highestVersion: UInt32,
        _ body: (_ version: UInt32, _ payload: UnsafeRawBufferPointer) -> Bool
    ) -> Int {
        var offset = 0
        while bytes.count - offset >= overhead {
            let claimed = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + ChecksummedFrame.headerSize, as: UInt32.self)))
            // A length beyond what arrived: torn (or damaged), never a reason to read on.
            guard claimed <= bytes.count - offset - overhead else { break }
            let end = offset + overhead + claimed
            guard
                let frame = try? ChecksummedFrame.open(
                    UnsafeRawBufferPointer(rebasing: bytes[offset..<end]), magic: magic, highestVersion: highestVersion,
                    minimumPayload: 4),
                body(frame.version, UnsafeRawBufferPointer(rebasing: frame.payload.dropFirst(4)))
            else { break }
            offset = end
        }
        return offset
    }

    /// `forEachRecord` over the file `file`, read as far as its real size goes (at most
    /// `limit` bytes). Returns the length of the records accepted and the file's size: a
    /// shorter length means a torn, damaged or foreign tail, which an owner of the file may
    /// cut off (`FileDescriptor.truncate`) so that records appended later are read.
    @discardableResult
    package static func readRecords(
        of file: borrowing FileDescriptor, magic: [UInt8], highestVersion: UInt32, limit: Int,
        _ body: (_ version: UInt32, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(FileSystemError) -> (accepted: Int64, size: Int64) {
        let size = try file.status().size
        var bytes = [UInt8](repeating: 0, count: Int(min(max(size, 0), Int64(limit))))
        let read = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(FileSystemError) in try file.readFully(into: buffer, at: 0) }
        }
        let count = try read.get()
        let accepted = bytes.withUnsafeBytes { raw in
            forEachRecord(
                in: UnsafeRawBufferPointer(rebasing: raw[..<count]), magic: magic, highestVersion: highestVersion, body)
        }
        return (Int64(accepted), size)
    }
}
