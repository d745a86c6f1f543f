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
    /// (damaged, truncated, or larger than declared).
    static func decompress(_ bytes: ArraySlice<UInt8>, expectedSize: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: max(expectedSize, 1))
        var produced = uLong(max(expectedSize, 1))
        var consumed = uLong(bytes.count)
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { input in
                uncompress2(out.baseAddress, &produced, input.baseAddress, &consumed)
            }
        }
        guard status == Z_OK, Int(produced) == expectedSize, Int(consumed) == bytes.count else { return nil }
        if expectedSize == 0 { return [] }
        return output
    }
}
