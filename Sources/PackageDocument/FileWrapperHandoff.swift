import PackageCore
import Synchronization

/// The wrapper a FileWrapper reader or writer passes back to the host, and the previous one
/// the host passes to a writer: the tree last read from or written to the document's file.
///
/// Lives in the read and write configurations, which cross from the host (main actor) to
/// the reader or writer (background); a lock guards the slots. Writes replayed one after
/// the other into one place chain their handoffs: each writer's previous wrapper is the one
/// the write before it produced.
final class FileWrapperHandoff: Sendable {
    private let slots = Mutex<(previous: FileWrapper?, produced: FileWrapper?, statistics: SaveStatistics?)>(
        (nil, nil, nil))
    private let extra = Mutex<(mergeBase: TreeSnapshot?, merge: OtherWriterMerge?, base: TreeSnapshot?)>((nil, nil, nil))
    /// The handoff of the write just before this one into the same place, if any.
    private let predecessor: FileWrapperHandoff?

    init(previous: FileWrapper? = nil, after predecessor: FileWrapperHandoff? = nil) {
        self.predecessor = predecessor
        slots.withLock { $0.previous = previous }
    }

    /// What the host had: the tree last read or written at the destination (or what the
    /// write before this one into the same place produced).
    var previous: FileWrapper? {
        if let produced = predecessor?.produced { return produced }
        return slots.withLock { $0.previous }
    }

    /// The package's tree as the document read it or last saved it, handed to a writer
    /// saving in place, which merges what another writer saved since (`OtherWriterMerge`).
    var mergeBase: TreeSnapshot? {
        get { extra.withLock { $0.mergeBase } }
        set { extra.withLock { $0.mergeBase = newValue } }
    }

    /// What that merge did; nil when nobody else had saved.
    var merge: OtherWriterMerge? {
        get { extra.withLock { $0.merge } }
        set { extra.withLock { $0.merge = newValue } }
    }

    /// The package's tree as read (under the read's lock) or as saved (under the save's),
    /// the base of the next save's merge; nil for a flat file.
    var base: TreeSnapshot? {
        get { extra.withLock { $0.base } }
        set { extra.withLock { $0.base = newValue } }
    }

    /// What the write did, as the save engine counted it.
    var statistics: SaveStatistics? {
        get { slots.withLock { $0.statistics } }
        set { slots.withLock { $0.statistics = newValue } }
    }

    /// What the reader read or the writer wrote; nil until it did.
    var produced: FileWrapper? {
        get { slots.withLock { $0.produced } }
        set { slots.withLock { $0.produced = newValue } }
    }
}
