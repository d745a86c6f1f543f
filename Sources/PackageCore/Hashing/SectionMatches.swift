import CHashKernel
import Synchronization

/// Cut candidates computed ahead of the cut search, for the 64 KiB sections of one piece
/// in a `ChunkingHelper` slot: the reading thread fills them when it would otherwise wait
/// for a free slot, and the helper, reaching such a section, only scans the short list.
///
/// Which positions match a mask depends only on the 64 bytes ending at each, not on where
/// the current chunk started, so a section's list is right whoever computes it and
/// whenever: the helper applies the cut rule (minimum, strict then loose mask, maximum) to
/// the list as it would to the bytes. The first section of a piece is never computed ahead
/// (its first windows reach into the previous piece).
///
/// Each section is claimed once, by an atomic bit: by the reader that computes it, or by
/// the helper, which then searches the bytes itself (it does not wait for a reader still
/// at work on it). A list is published with a releasing store of its `done` bit and read
/// after an acquiring load of it; the owner resets the table only while the slot is its
/// own (before reading into it). Hence `@unchecked Sendable`.
final class SectionMatches: @unchecked Sendable {
    static let sectionSize = 64 << 10
    /// Matches a section may hold; random data has one in 512 KiB (the loose mask). A section
    /// with more (built bytes) is left to the helper's own search.
    static let capacity = 16
    static let sections = ChunkingHelper.slotSize / sectionSize

    private let claimed = Atomic<UInt32>(0)
    private let done = Atomic<UInt32>(0)
    /// Per section: its number of matches, or -1 when they did not fit.
    private let counts: UnsafeMutablePointer<Int>
    private let entries: UnsafeMutablePointer<UInt32>

    init() {
        counts = .allocate(capacity: Self.sections)
        counts.initialize(repeating: 0, count: Self.sections)
        entries = .allocate(capacity: Self.sections * Self.capacity)
        entries.initialize(repeating: 0, count: Self.sections * Self.capacity)
    }

    deinit {
        counts.deallocate()
        entries.deallocate()
    }

    /// Forgets every section: the owner, before it reads new bytes into the slot.
    func reset() {
        claimed.store(0, ordering: .relaxed)
        done.store(0, ordering: .relaxed)
    }

    /// For the helper at section `section` of the piece: the matches computed ahead, or
    /// nil when nobody did (the section is then the helper's, and nobody will).
    func take(_ section: Int) -> UnsafeBufferPointer<UInt32>? {
        guard section > 0, section < Self.sections else { return nil }
        let bit = UInt32(1) << section
        if claimed.bitwiseOr(bit, ordering: .relaxed).oldValue & bit == 0 { return nil }
        guard done.load(ordering: .acquiring) & bit != 0, counts[section] >= 0 else { return nil }
        return UnsafeBufferPointer(start: entries + section * Self.capacity, count: counts[section])
    }

    /// For the reader: computes the first section of `piece` that nobody has claimed yet.
    /// Returns false when there is none left.
    func computeNext(of piece: UnsafeRawBufferPointer, parameters: ChunkingParameters) -> Bool {
        let sectionCount = min(Self.sections, (piece.count + Self.sectionSize - 1) / Self.sectionSize)
        guard sectionCount > 1, let base = piece.baseAddress else { return false }
        var free = ~claimed.load(ordering: .relaxed) & (UInt32(1) << sectionCount - 1) & ~1
        while free != 0 {
            let section = free.trailingZeroBitCount
            let bit = UInt32(1) << section
            free &= ~bit
            guard claimed.bitwiseOr(bit, ordering: .relaxed).oldValue & bit == 0 else { continue }
            let from = section * Self.sectionSize
            let to = min(piece.count, from + Self.sectionSize)
            let found = pkg_gear_matches(
                base.assumingMemoryBound(to: UInt8.self), from, to, parameters.strictMask, parameters.looseMask,
                entries + section * Self.capacity, Self.capacity)
            counts[section] = found < 0 ? -1 : found
            done.bitwiseOr(bit, ordering: .releasing)
            return true
        }
        return false
    }
}

extension GearCutSearch {
    /// `findCut` over a section whose matches are known (`SectionMatches`): the index of
    /// the byte that ends the current chunk, which holds `held` bytes before
    /// `bytes[position]`, if it ends before `limit`; nil when it goes on past it.
    func findCut(matches: UnsafeBufferPointer<UInt32>, limit: Int, from position: Int, held: Int) -> Int? {
        let minimumEnd = position + parameters.minimumSize - 1 - held
        guard minimumEnd < limit else { return nil }
        let targetEnd = position + parameters.targetSize - 1 - held
        let maximumEnd = position + parameters.maximumSize - 1 - held
        let first = max(position, minimumEnd)
        for entry in matches {
            let index = Int(entry & PKG_GEAR_MATCH_POSITION)
            if index < first { continue }
            if index >= min(maximumEnd, limit) { break }
            if index < targetEnd ? entry & PKG_GEAR_MATCH_FIRST != 0 : entry & PKG_GEAR_MATCH_SECOND != 0 {
                return index
            }
        }
        return maximumEnd < limit ? maximumEnd : nil
    }
}
