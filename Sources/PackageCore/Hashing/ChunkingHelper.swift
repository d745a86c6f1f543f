import Dispatch
import Glibc
import Synchronization

/// What takes a file's pieces, in order, after the file hash: a `ChunkCutter`'s search and
/// chunk hashes, or a hinted chunker's (`HintedPieces`).
protocol PieceConsumer: AnyObject {
    /// Takes the next piece of the file; `ahead` holds the cut candidates computed for some
    /// of its sections, when there are any.
    func consume(_ piece: UnsafeRawBufferPointer, ahead: SectionMatches?)
}

/// A second thread for `ChunkingHasher`: it runs the cut search and the chunk hashes (a
/// `ChunkCutter`) over the pieces the owning thread hands it, in order, while the owner
/// feeds the file hash and produces the next piece. One large file then costs about
/// max(file hash, search + chunk hashes) instead of their sum. A file the hasher reads
/// itself is instead read by both threads (`read(_:)`, `PairedFileReading`).
///
/// Bounded: at most `slotCount` pieces are in flight; the owner waits for a free slot
/// before handing over another. A piece is either a slot of the helper's own memory (the
/// owner reads or copies into it) or the owner's memory, lent until `drain` returns.
/// The thread waits parked between files and ends when the helper is released.
final class ChunkingHelper {
    /// Pieces in flight at most, by default: the owner fills one while the helper consumes
    /// another, and the rest absorb how unevenly the work falls (a piece inside a chunk's
    /// first 256 KiB is only hashed, one past it is searched too) and scheduling jitter.
    static let defaultSlotCount = 6
    static let slotSize = ChunkBuffer.defaultSize

    let slotCount: Int
    private let channel: Channel
    /// Pieces handed over so far (the slot of piece n is n % slotCount).
    private var submitted = 0

    /// Starts the thread; nil when it cannot be created (the hasher then works alone).
    init?(cutter: ChunkCutter, slots: Int = ChunkingHelper.defaultSlotCount) {
        slotCount = slots
        channel = Channel(cutter: cutter, slots: slots)
        guard channel.start() else { return nil }
    }

    deinit {
        drain()
        channel.stop()
    }

    /// The memory of the next slot, once the helper no longer reads it (waits for that).
    /// Follow with `submit(count:)`, or with `abandon()` when nothing is to be handed over.
    func nextSlot() -> UnsafeMutableRawBufferPointer {
        waitForFreeSlot()
        let index = submitted % slotCount
        channel.ahead[index].reset()
        return channel.slots[index]
    }

    /// Hands over the first `count` bytes of the slot `nextSlot` returned.
    func submit(count: Int) {
        let slot = channel.slots[submitted % slotCount]
        hand(UnsafeRawBufferPointer(rebasing: slot[..<count]), inSlot: true)
    }

    /// Gives back the slot `nextSlot` returned, unused.
    func abandon() { channel.free.signal() }

    /// Hands over the caller's own bytes: call `drain` before they change or go away.
    func lend(_ bytes: UnsafeRawBufferPointer) {
        waitForFreeSlot()
        hand(bytes, inSlot: false)
    }

    /// Waits until the helper has consumed every piece handed over: the cutter is then the
    /// owner's again, and lent bytes are free.
    func drain() {
        for _ in 0..<slotCount { waitForFreeSlot() }
        for _ in 0..<slotCount { channel.free.signal() }
    }

    /// Runs `job` on both threads: the helper reads its odd pieces while this thread reads
    /// the even ones (`PairedFileReading`). Returns when both halves are done. The job's
    /// buffers are slots 0 and 1, and its candidates their `ahead` tables.
    func read(_ job: PairedFileReading) {
        drain()
        channel.paired = job
        channel.filled.signal()
        job.run(reader: 0)
        job.helperFinished.wait()
        channel.paired = nil
    }

    /// Slots 0 and 1 and their candidate tables, for a `PairedFileReading` (free while the
    /// helper is drained).
    var pairedBuffers: (buffers: [UnsafeMutableRawBufferPointer], candidates: [SectionMatches]) {
        (Array(channel.slots[0..<2]), Array(channel.ahead[0..<2]))
    }

    private func hand(_ piece: UnsafeRawBufferPointer, inSlot: Bool) {
        let index = submitted % slotCount
        channel.pieces[index] = piece
        channel.inSlot[index] = inSlot
        submitted += 1
        channel.filled.signal()
    }

    /// Takes a free slot; while there is none (the helper is behind), computes sections'
    /// cut candidates ahead for it instead of waiting idle, and waits once none is left.
    private func waitForFreeSlot() {
        while !channel.free.tryWait() {
            if !computeAhead() {
                channel.free.wait()
                return
            }
        }
    }

    /// Computes one section of matches in a piece handed over and not yet reached by the
    /// helper, the newest first (the helper gets there last). False when none is left.
    private func computeAhead() -> Bool {
        let reached = channel.started.load(ordering: .relaxed) - 1
        var piece = submitted - 1
        while piece >= max(reached, submitted - slotCount, 0) {
            let index = piece % slotCount
            if channel.inSlot[index],
                channel.ahead[index].computeNext(of: channel.pieces[index], parameters: channel.cutter.parameters)
            {
                return true
            }
            piece -= 1
        }
        return false
    }

    /// What the two threads share. Every access to `pieces`, the slots and the cutter is
    /// ordered by the semaphores: the owner writes a piece's entry (and its slot) before
    /// `filled.signal()`, the helper reads them after `filled.wait()` and hands them back
    /// with `free.signal()`, which the owner waits on before touching them again; hence
    /// `@unchecked Sendable`.
    private final class Channel: @unchecked Sendable {
        let cutter: ChunkCutter
        let slots: [UnsafeMutableRawBufferPointer]
        /// The piece handed over in each slot's turn. Fixed memory, not arrays: the owner
        /// writes one entry while the helper reads another, and an array property would be
        /// one shared variable (its copy-on-write check could even replace its storage).
        let pieces: UnsafeMutablePointer<UnsafeRawBufferPointer>
        /// Whether each piece lies in its slot (not lent): only those get matches ahead.
        let inSlot: UnsafeMutablePointer<Bool>
        /// Per slot, the sections the owner computed ahead.
        let ahead: [SectionMatches]
        /// A whole file the helper reads half of, when the owner hands one over
        /// (`ChunkingHelper.read`): set before `filled.signal()`, cleared after the job's
        /// `helperFinished`.
        var paired: PairedFileReading?
        /// Pieces the helper has begun: the owner computes ahead only past them.
        let started = Atomic<Int>(0)
        /// Pieces handed over and not yet taken by the helper.
        let filled = SpinningSemaphore(value: 0)
        /// Pieces the owner may still hand over before the helper gives one back.
        let free: SpinningSemaphore
        let stopping = Atomic<Bool>(false)

        init(cutter: ChunkCutter, slots count: Int) {
            self.cutter = cutter
            slots = (0..<count).map { _ in .allocate(byteCount: ChunkingHelper.slotSize, alignment: 4096) }
            pieces = .allocate(capacity: count)
            pieces.initialize(repeating: UnsafeRawBufferPointer(start: nil, count: 0), count: count)
            inSlot = .allocate(capacity: count)
            inSlot.initialize(repeating: false, count: count)
            ahead = (0..<count).map { _ in SectionMatches() }
            free = SpinningSemaphore(value: count)
        }

        deinit {
            for slot in slots { slot.deallocate() }
            pieces.deallocate()
            inSlot.deallocate()
        }

        /// Starts the thread, which holds the channel until `stop`.
        func start() -> Bool {
            do { try DetachedThread.start(stackSize: nil) { self.run() } } catch { return false }
            return true
        }

        /// Ends the thread once it has consumed what it was given.
        func stop() {
            stopping.store(true, ordering: .releasing)
            filled.signal()
        }

        private func run() {
            var taken = 0
            while true {
                filled.wait()
                if stopping.load(ordering: .acquiring) { return }
                if let job = paired {
                    IOFaultInjection.withInjector(job.injector) { job.run(reader: 1) }
                    job.helperFinished.signal()
                    continue
                }
                let index = taken % slots.count
                taken += 1
                started.store(taken, ordering: .relaxed)
                cutter.consume(pieces[index], ahead: inSlot[index] ? ahead[index] : nil)
                free.signal()
            }
        }
    }
}
