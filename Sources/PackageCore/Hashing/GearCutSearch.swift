import CHashKernel
import Glibc

/// The chunker's cut search over a stream that arrives in pieces: where, in a piece, the
/// current chunk ends (Specs/hashing.md, "Cut rule").
///
/// Keeps the 64 bytes before the current piece: a position near a piece's start has part
/// of its Gear window in the previous piece, and is searched in a small stitch buffer
/// (those 64 bytes followed by the piece's first 64).
struct GearCutSearch: ~Copyable {
    let parameters: ChunkingParameters
    /// [0, 64): the bytes before the current piece; [64, 128): the piece's first bytes,
    /// copied there on first use within the piece (`stitched`).
    private let stitch: UnsafeMutableRawBufferPointer

    init(parameters: ChunkingParameters) {
        self.parameters = parameters
        stitch = .allocate(byteCount: 128, alignment: 64)
        stitch.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { stitch.deallocate() }

    /// The index in `bytes` of the byte that ends the current chunk, which holds `held`
    /// bytes before `bytes[position]`; nil when the chunk goes on past the piece.
    /// `stitched` starts false for each piece (the stitch buffer is filled on demand).
    func findCut(in bytes: UnsafeRawBufferPointer, from position: Int, held: Int, stitched: inout Bool) -> Int? {
        let count = bytes.count
        // Indices of the byte that would make the chunk that long.
        let minimumEnd = position + parameters.minimumSize - 1 - held
        guard minimumEnd < count else { return nil }
        let targetEnd = position + parameters.targetSize - 1 - held
        let maximumEnd = position + parameters.maximumSize - 1 - held
        let first = max(position, minimumEnd)
        if first < targetEnd,
            let cut = find(bytes, from: first, to: min(targetEnd, count), mask: parameters.strictMask, stitched: &stitched)
        {
            return cut
        }
        let looseStart = max(first, targetEnd)
        if looseStart < count,
            let cut = find(bytes, from: looseStart, to: min(maximumEnd, count), mask: parameters.looseMask, stitched: &stitched)
        {
            return cut
        }
        return maximumEnd < count ? maximumEnd : nil
    }

    /// Keeps the last 64 bytes of a piece just consumed, for the next piece's windows.
    func rememberTail(of bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let history = stitch.baseAddress!
        if bytes.count >= 64 {
            memcpy(history, base + bytes.count - 64, 64)
        } else {
            memmove(history, history + bytes.count, 64 - bytes.count)
            memcpy(history + 64 - bytes.count, base, bytes.count)
        }
    }

    /// The first index in [from, to) whose Gear hash matches `mask`.
    private func find(
        _ bytes: UnsafeRawBufferPointer, from: Int, to: Int, mask: UInt64, stitched: inout Bool
    ) -> Int? {
        guard from < to, let base = bytes.baseAddress else { return nil }
        var from = from
        if from < 64 {
            let upper = min(to, 64)
            if !stitched {
                memcpy(stitch.baseAddress! + 64, base, min(bytes.count, 64))
                stitched = true
            }
            let window = stitch.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let found = pkg_gear_find(window, 64 + from, 64 + upper, mask)
            if found < 64 + upper { return found - 64 }
            from = upper
        }
        guard from < to else { return nil }
        let found = pkg_gear_find(base.assumingMemoryBound(to: UInt8.self), from, to, mask)
        return found < to ? found : nil
    }
}
