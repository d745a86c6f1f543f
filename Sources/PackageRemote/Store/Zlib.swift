import CZlib

/// One-shot zlib streams for version manifests (paths and small integers compress about
/// 3:1; hashes not at all).
enum Zlib {
    static func compress(_ bytes: [UInt8]) -> [UInt8] {
        var capacity = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(capacity))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &capacity, input.baseAddress, uLong(input.count), 6)
            }
        }
        precondition(status == Z_OK, "zlib compress2 failed (\(status))")
        output.removeSubrange(Int(capacity)...)
        return output
    }

    /// Inflates `bytes`, which must give exactly `expectedSize` bytes; nil otherwise
    /// (damaged, truncated, larger than declared, or with bytes after its end).
    ///
    /// `expectedSize` is what a manifest's header claims, so nothing is allocated from it:
    /// the output grows with what actually inflates (doubling from 64 KiB), never past
    /// `expectedSize` + 1 bytes, however large the claim.
    /// - Complexity: O(output); memory at most twice the output.
    static func decompress(_ bytes: ArraySlice<UInt8>, expectedSize: Int) -> [UInt8]? {
        guard expectedSize >= 0 else { return nil }
        var stream = z_stream()
        guard inflateInit_(&stream, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        // One byte of room past the claim: a stream that fills it is longer than stated.
        let ceiling = expectedSize + 1
        var output = [UInt8](repeating: 0, count: min(ceiling, 64 << 10))
        var produced = 0
        var status = Z_OK
        bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.avail_in = uInt(input.count)
            while status == Z_OK {
                if produced == output.count {
                    guard output.count < ceiling else { break }
                    output.append(contentsOf: repeatElement(0, count: min(output.count, ceiling - output.count)))
                }
                output.withUnsafeMutableBufferPointer { out in
                    stream.next_out = out.baseAddress! + produced
                    stream.avail_out = uInt(out.count - produced)
                    status = inflate(&stream, Z_NO_FLUSH)
                    produced = out.count - Int(stream.avail_out)
                }
                if status == Z_BUF_ERROR && stream.avail_out > 0 { break }  // input ended early
                if status == Z_BUF_ERROR { status = Z_OK }
            }
        }
        guard status == Z_STREAM_END, produced == expectedSize, stream.avail_in == 0 else { return nil }
        output.removeSubrange(produced...)
        return output
    }
}
