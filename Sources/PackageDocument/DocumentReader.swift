import Foundation

/// Turns the file at `source` into a snapshot, off the main actor.
///
/// The host calls `read(from:progress:)` in the background, then hands the snapshot to the
/// document's `apply(snapshot:previous:)` on the main actor. Implement it directly for
/// streaming or direct URL access; `FileWrapperDocumentReader` covers the rest. A reader
/// runs in the background, so its conformance cannot be isolated to an actor.
public protocol DocumentReader: SendableMetatype {
    /// What a read produces: any type, handed to the main actor with `sending`.
    associatedtype Snapshot
    /// Where a read comes from; a URL unless the backing store needs another type.
    associatedtype Source = URL

    /// Reads `source`. `progress` is a share of the host's progress: `start(totalCount:)`
    /// it with coarse units (files, chunks); dropped unstarted, it completes by itself.
    nonisolated func read(from source: Source, progress: consuming Subprogress) async throws -> sending Snapshot
}
