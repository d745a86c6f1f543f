import Foundation
import Observation
import Synchronization

/// Where a document lives and how to reach its file safely: the configuration the host
/// passes to `makeDocument`.
///
/// Readable from any thread (a `Sendable`, observable class whose state sits under a lock);
/// the host updates it after a save-as or a save. Inside `read`/`write`, prefer their
/// `source`/`destination` parameter: `fileURL` is the document's location now, which a
/// save-as may change while a write is running.
public final class URLDocumentConfiguration: Sendable, Observable {
    private struct State {
        var fileURL: URL?
        var lastContentModificationDate: Date?
    }

    private let state: Mutex<State>
    private let registrar = ObservationRegistrar()

    /// A configuration for a document at `fileURL` (nil: not saved yet) whose content was
    /// last modified at `lastContentModificationDate`.
    public init(fileURL: URL?, lastContentModificationDate: Date? = nil) {
        state = Mutex(State(fileURL: fileURL, lastContentModificationDate: lastContentModificationDate))
    }

    /// The document's file; nil for a document not saved yet.
    public var fileURL: URL? {
        registrar.access(self, keyPath: \.fileURL)
        return state.withLock { $0.fileURL }
    }

    /// When the document's content was last written, as the file system says.
    public var lastContentModificationDate: Date? {
        registrar.access(self, keyPath: \.lastContentModificationDate)
        return state.withLock { $0.lastContentModificationDate }
    }

    /// A new coordinator for one access to the document's file or to items inside it.
    /// Cheap: call it for each read or write outside the host's own.
    public func makeFileCoordinator() -> FileCoordinator {
        FileCoordinator(documentURL: fileURL)
    }

    func update(fileURL: URL?) {
        registrar.withMutation(of: self, keyPath: \.fileURL) {
            state.withLock { $0.fileURL = fileURL }
        }
    }

    func update(lastContentModificationDate date: Date?) {
        registrar.withMutation(of: self, keyPath: \.lastContentModificationDate) {
            state.withLock { $0.lastContentModificationDate = date }
        }
    }
}
