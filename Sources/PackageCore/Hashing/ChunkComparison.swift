/// How a file's new chunk list differs from the one recorded for its previous version:
/// which byte ranges an in-place patch must write, and how many bytes are new content.
///
/// A chunk is `unchanged` when the old file had a chunk with the same hash and length at
/// the same offset: those bytes are already in place. A chunk the old file held elsewhere
/// (an insertion or removal moved it) is `moved`: in place it must be written again, but
/// its bytes need not travel. Everything else is `new`.
package struct ChunkComparison: Sendable, Hashable {
    package enum Status: Sendable, Hashable {
        case unchanged
        /// The old file holds these bytes as a chunk at `from`.
        case moved(from: Int64)
        case new
    }

    /// One status per chunk of the new list, in order.
    package var statuses: [Status]
    /// The byte ranges of the new file to write over the old one in place (adjacent
    /// chunks merged, in order). A size change is not in them: truncate or extend to `newSize`.
    package var changedRanges: [Range<Int64>]
    /// The bytes in `changedRanges`.
    package var changedBytes: Int64
    /// The bytes of the `new` chunks: content the old file does not have at all.
    package var newBytes: Int64
    package var oldSize: Int64
    package var newSize: Int64

    /// Compares `new` with `old`.
    ///
    /// - Complexity: O(n + m) for n new and m old chunks (a merge by offset and a hash table).
    package init(old: ChunkList, new: ChunkList) {
        var oldOffsets: [ContentHash: Int64] = [:]
        oldOffsets.reserveCapacity(old.count)
        for chunk in old where oldOffsets[chunk.hash] == nil { oldOffsets[chunk.hash] = chunk.offset }
        var statuses: [Status] = []
        statuses.reserveCapacity(new.count)
        var ranges: [Range<Int64>] = []
        var changed: Int64 = 0
        var fresh: Int64 = 0
        var oldIndex = 0
        for chunk in new {
            while oldIndex < old.count && old[oldIndex].offset < chunk.offset { oldIndex += 1 }
            let status: Status
            if oldIndex < old.count && old[oldIndex].offset == chunk.offset && old[oldIndex].length == chunk.length
                && old[oldIndex].hash == chunk.hash
            {
                status = .unchanged
            } else if let from = oldOffsets[chunk.hash] {
                status = .moved(from: from)
            } else {
                status = .new
                fresh += chunk.length
            }
            statuses.append(status)
            guard status != .unchanged else { continue }
            changed += chunk.length
            if let last = ranges.last, last.upperBound == chunk.offset {
                ranges[ranges.count - 1] = last.lowerBound..<chunk.end
            } else {
                ranges.append(chunk.range)
            }
        }
        self.statuses = statuses
        self.changedRanges = ranges
        self.changedBytes = changed
        self.newBytes = fresh
        self.oldSize = old.totalLength
        self.newSize = new.totalLength
    }

    /// Whether the new file equals the old one (as far as the chunk hashes tell).
    package var isIdentical: Bool { changedRanges.isEmpty && oldSize == newSize }

    /// The number of chunks that are not `unchanged`.
    package var changedChunkCount: Int { statuses.count { $0 != .unchanged } }

    /// Whether patching in place pays: the changed bytes are at most `fraction` of the new
    /// file (beyond that, writing it whole costs about the same and is simpler).
    package func patchPays(maximumFraction fraction: Double = 0.5) -> Bool {
        Double(changedBytes) <= fraction * Double(max(newSize, 1))
    }
}
