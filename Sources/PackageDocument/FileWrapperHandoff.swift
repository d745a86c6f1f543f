import Synchronization

/// The wrapper a FileWrapper reader or writer passes back to the host, and the previous one
/// the host passes to a writer: the tree last read from or written to the document's file.
///
/// Lives in the read and write configurations, which cross from the host (main actor) to
/// the reader or writer (background); a lock guards the two slots.
final class FileWrapperHandoff: Sendable {
    private let slots = Mutex<(previous: FileWrapper?, produced: FileWrapper?, statistics: SaveStatistics?)>(
        (nil, nil, nil))

    init(previous: FileWrapper? = nil) {
        slots.withLock { $0.previous = previous }
    }

    /// What the host had: the tree last read or written at the destination.
    var previous: FileWrapper? { slots.withLock { $0.previous } }

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
