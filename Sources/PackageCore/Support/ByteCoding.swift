/// Appends little-endian integers and raw bytes to a growing buffer.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    package mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }

    package mutating func append<S: Sequence>(contentsOf raw: S) where S.Element == UInt8 {
        bytes.append(contentsOf: raw)
    }

    package mutating func append(_ hash: ContentHash) { hash.append(to: &bytes) }

    package var count: Int { bytes.count }

    /// Empties the writer, keeping its capacity for the next bytes.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Overwrites a previously appended integer at `offset`.
    package mutating func patch<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<raw.count { bytes[offset + index] = raw[index] }
        }
    }
}

/// Reads little-endian integers from a buffer, failing (never trapping) past its end.
package struct ByteReader {
    package struct Truncated: Error {}

    package let buffer: UnsafeRawBufferPointer
    package private(set) var offset: Int

    package init(_ buffer: UnsafeRawBufferPointer, offset: Int = 0) {
        self.buffer = buffer
        self.offset = offset
    }

    package var remaining: Int { buffer.count - offset }

    @inline(__always)
    package mutating func read<T: FixedWidthInteger>(_: T.Type) throws(Truncated) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        let value = buffer.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: value)
    }

    /// The next `count` bytes, without copying.
    @inline(__always)
    package mutating func bytes(_ count: Int) throws(Truncated) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Truncated() }
        let slice = UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
        offset += count
        return slice
    }

    package mutating func hash() throws(Truncated) -> ContentHash {
        ContentHash(canonicalBytes: try bytes(16))
    }

    package mutating func skip(_ count: Int) throws(Truncated) { _ = try bytes(count) }
}
