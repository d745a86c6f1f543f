/// Appends little-endian integers and raw bytes to a growing buffer.
public struct ByteWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    public mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    public mutating func append<S: Sequence>(contentsOf raw: S) where S.Element == UInt8 {
        bytes.append(contentsOf: raw)
    }

    public mutating func append(_ hash: ContentHash) { hash.append(to: &bytes) }

    public var count: Int { bytes.count }

    /// Overwrites a previously appended integer at `offset`.
    public mutating func patch<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<raw.count { bytes[offset + index] = raw[index] }
        }
    }
}

/// Reads little-endian integers from a buffer, failing (never trapping) past its end.
public struct ByteReader {
    public struct Truncated: Error {}

    public let buffer: UnsafeRawBufferPointer
    public private(set) var offset: Int

    public init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    public var remaining: Int { buffer.count - offset }

    @inline(__always)
    public mutating func read<T: FixedWidthInteger>(_: T.Type) throws(Truncated) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    /// The next `count` bytes, without copying.
    @inline(__always)
    public mutating func bytes(_ count: Int) throws(Truncated) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Truncated() }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
        offset += count
        return slice
    }

    public mutating func hash() throws(Truncated) -> ContentHash {
        ContentHash(canonicalBytes: try bytes(16))
    }

    public mutating func skip(_ count: Int) throws(Truncated) { _ = try bytes(count) }
}
