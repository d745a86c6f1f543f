import PackageCore

/// The pack writer's 1 MiB output buffer: records and data gather here and go out in large
/// positioned writes; headers already written can be patched; ranges can be reserved for
/// raw copies that other threads fill in later (`reserve`). Not thread-safe: the writer's.
final class OutputBuffer {
    let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: ChunkBuffer.defaultSize, alignment: 4096)
    private var count = 0
    /// The file offset of `storage[0]`.
    private var flushed: Int64 = 0

    /// A buffer whose first byte goes to `offset` of the file (an in-place append starts at
    /// the old archive's end).
    init(startingAt offset: Int64 = 0) { flushed = offset }

    deinit { storage.deallocate() }

    var position: Int64 { flushed + Int64(count) }

    func append(_ bytes: [UInt8], to file: borrowing FileDescriptor) throws {
        try bytes.withUnsafeBytes { try append($0, to: file) }
    }

    func append(_ bytes: UnsafeRawBufferPointer, to file: borrowing FileDescriptor) throws {
        if count + bytes.count > storage.count { try flush(to: file) }
        if bytes.count >= storage.count {
            try file.write(bytes, at: flushed)
            flushed += Int64(bytes.count)
            return
        }
        UnsafeMutableRawBufferPointer(rebasing: storage[count..<(count + bytes.count)]).copyMemory(from: bytes)
        count += bytes.count
    }

    /// Skips `length` bytes of the file, to be written by someone else; returns their offset.
    func reserve(_ length: Int64, in file: borrowing FileDescriptor) throws -> Int64 {
        try flush(to: file)
        let offset = flushed
        flushed += length
        return offset
    }

    func flush(to file: borrowing FileDescriptor) throws {
        guard count > 0 else { return }
        try file.write(UnsafeRawBufferPointer(rebasing: storage[..<count]), at: flushed)
        flushed += Int64(count)
        count = 0
    }

    /// Replaces bytes already appended at `offset` (in the buffer, or in the file).
    func overwrite(_ bytes: [UInt8], at offset: Int64, to file: borrowing FileDescriptor) throws {
        if offset >= flushed {
            let start = Int(offset - flushed)
            bytes.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: storage[start..<(start + $0.count)]).copyMemory(from: $0)
            }
        } else {
            try flush(to: file)
            try bytes.withUnsafeBytes { try file.write($0, at: offset) }
        }
    }
}
