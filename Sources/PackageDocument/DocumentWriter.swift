import Foundation

/// Writes a snapshot to `destination`, off the main actor.
///
/// The host takes the snapshot on the main actor (`snapshot(contentType:)`) and calls
/// `write(content:to:previous:progress:)` in the background, under the file coordinator's
/// exclusive lock. Write to `destination`, never to `configuration.fileURL`: for a writer
/// of your own it is a staged place beside the document (Specs/document.md, "Where a writer
/// writes") — an empty file for a flat type, nothing at all for a package type (create the
/// directory) — which the host commits once the write returned: renamed over a flat file,
/// saved into a package through the save engine.
public protocol DocumentWriter: SendableMetatype {
    /// What a write consumes.
    associatedtype Snapshot
    /// Where a write goes; a URL unless the backing store needs another type.
    associatedtype Destination = URL

    /// Writes `content`. `previous` is the snapshot whose bytes are at `destination` when
    /// the call starts (nil when it is fresh: a staged destination, a first save, a save
    /// elsewhere, an export): compare with it to skip unchanged parts, or ignore it and
    /// write everything, which is always correct. Throwing leaves the document's file as it
    /// was; the host keeps `content` and hands it to a writer again at the next save.
    nonisolated func write(
        content: sending Snapshot, to destination: Destination, previous: sending Snapshot?,
        progress: consuming Subprogress
    ) async throws
}
