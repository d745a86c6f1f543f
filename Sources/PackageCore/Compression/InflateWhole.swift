/// Why a buffer did not inflate to what its container said: one line, for the caller to
/// put after what it was reading.
package struct InflateError: Error, Sendable, Equatable {
    package let reason: String
}

extension Inflater {
    /// Inflates `bytes`, one whole stream that must give exactly `size` bytes and end
    /// exactly where `bytes` does.
    ///
    /// `size` is what the (untrusted) container claims, so nothing is allocated from it:
    /// the output grows with what actually inflates (doubling from 64 KiB), never past
    /// `size` + 1 bytes, however large the claim.
    /// - Throws: `InflateError` when the data is damaged, truncated, inflates to more or
    ///   fewer bytes than `size`, or has bytes after its end.
    /// - Complexity: O(output); memory at most twice the output.
    package static func inflated(
        _ bytes: ArraySlice<UInt8>, size: Int, framing: DeflateFraming
    ) throws(InflateError) -> [UInt8] {
        guard size >= 0, size < Int.max else { throw InflateError(reason: "its declared size \(size) is out of range") }
        let inflater = Inflater(framing: framing)
        // One byte of room past the claim: a stream that fills it is longer than stated.
        let ceiling = size + 1
        var output = [UInt8](repeating: 0, count: min(ceiling, 64 << 10))
        var produced = 0
        var consumed = 0
        var failure: String?
        bytes.withUnsafeBytes { input in
            while failure == nil {
                if produced == output.count {
                    guard output.count < ceiling else {
                        failure = "it inflates past its declared \(size) bytes"
                        return
                    }
                    output.append(contentsOf: repeatElement(0, count: min(output.count, ceiling - output.count)))
                }
                let step = output.withUnsafeMutableBytes { out in
                    inflater.step(
                        UnsafeRawBufferPointer(rebasing: input[consumed...]),
                        into: UnsafeMutableRawBufferPointer(rebasing: out[produced...]))
                }
                switch step {
                case .corrupt(let message): failure = message
                case .progress(let used, let made):
                    consumed += used
                    produced += made
                    // Room was left, so no progress means the input ended inside the stream.
                    if used == 0 && made == 0 { failure = "the stream is truncated" }
                case .end(let used, let made):
                    consumed += used
                    produced += made
                    return
                }
            }
        }
        if let failure { throw InflateError(reason: failure) }
        guard produced == size else {
            throw InflateError(reason: "it inflates to \(produced) bytes, its container says \(size)")
        }
        guard consumed == bytes.count else { throw InflateError(reason: "bytes follow the end of its stream") }
        output.removeSubrange(produced...)
        return output
    }
}
