import Foundation

/// Writes a snapshot to `destination`, off the main actor.
///
/// The host takes the snapshot on the main actor (`snapshot(contentType:)`) and calls
/// `write(content:to:previous:progress:)` in the background, under the file coordinator's
/// exclusive lock. `destination` may be a temporary location that the host moves into
/// place once the write returned: write there, never to `configuration.fileURL`.
public protocol DocumentWriter: SendableMetatype {
    /// What a write consumes.
    associatedtype Snapshot
    /// Where a write goes; a URL unless the backing store needs another type.
    associatedtype Destination = URL

    /// Writes `content`. `previous` is the last snapshot successfully written to this
    /// location (nil for a first save, a save elsewhere or an export): compare with it to
    /// skip unchanged parts, or ignore it and rewrite everything, which is always correct.
    nonisolated func write(
        content: sending Snapshot, to destination: Destination, previous: sending Snapshot?,
        progress: consuming Subprogress
    ) async throws
}
