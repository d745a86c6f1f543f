import Foundation

extension DocumentSession where Content: WritableDocument, Content.Writer.Destination == URL {
    /// Saves the document to its file.
    ///
    /// Checks the destination, takes a snapshot on the main actor, then writes it in the
    /// background under the exclusive lock. Snapshots of earlier saves that failed are
    /// written first, in order (Specs/document.md, "What the host guarantees"). Edits made
    /// while the save runs stay unsaved. Saves run one at a time, in order.
    /// - Throws: `DocumentError` (operation `.save`); the file keeps its last good version and
    ///   the edits stay pending for the next save.
    /// - Complexity: a few `stat`s and the exclusive lock, then the writer: a package written
    ///   with a `FileWrapperDocumentWriter` costs what changed (the save engine, journaled);
    ///   another writer writes a staged copy, fsynced and swapped in with one `renameat2`.
    public func save() async throws {
        guard let url = configuration.fileURL else { throw record(DocumentError.noFileYet(.save)) }
        try await write(to: url, contentType: contentType, operation: .save)
    }

    /// Saves the document to `url` (as `contentType`, by default its current type), which
    /// it lives at from then on.
    ///
    /// - Throws: `DocumentError` (operation `.saveAs`); the document stays where it was.
    /// - Complexity: the whole document is written (nothing there to reuse), through the
    ///   save engine for a package, staged and swapped in for a file.
    public func save(to url: URL, contentType: UTType? = nil) async throws {
        try await write(to: url, contentType: contentType ?? self.contentType, operation: .saveAs)
    }

    /// Writes a copy of the document to `url` as `contentType`; the document stays where it
    /// is, with its changes still unsaved. An export that fails or is cancelled leaves `url`
    /// as it was and nothing beside it.
    ///
    /// Exporting a package document as `.zip` (a type it does not write itself) flattens
    /// it: the package is written into a staging folder beside `url`, packed into a ZIP
    /// archive that replaces `url` atomically, and the folder removed.
    ///
    /// - Throws: `DocumentError` (operation `.export`).
    /// - Complexity: the whole document is written; a ZIP export also packs it (every file
    ///   read once, compressed on all cores) and removes the staging folder.
    public func export(to url: URL, contentType: UTType) async throws {
        let writable = Content.writableContentTypes
        if contentType.conforms(to: .zip), !writable.contains(where: { contentType.conforms(to: $0) }) {
            // A package type, else one whose writer may write a package (`DocumentForm`).
            guard let packageType = writable.first(where: { $0.isPackage }) ?? writable.first(where: { writtenForm(of: $0) != .file })
            else {
                throw record(DocumentError.notAPackageType(url: url, writable: writable))
            }
            try await write(to: url, contentType: contentType, operation: .export, archiving: packageType)
            return
        }
        try await write(to: url, contentType: contentType, operation: .export)
    }

    /// Saves if there are unsaved changes and a file to save to; errors are recorded in
    /// `lastError` (nobody awaits an autosave), and the edits stay pending.
    ///
    /// - Complexity: as `save()`; nothing when there is nothing to save.
    public func autosave() async {
        guard hasUnsavedChanges, let url = configuration.fileURL else { return }
        try? await write(to: url, contentType: contentType, operation: .autosave)
    }

    /// Autosaves `delay` after the last change: each change restarts the wait, so a burst
    /// of edits is saved once (a debounce). Changes come from the undo manager and from
    /// `updateChangeCount(_:)`.
    public func startAutosaving(after delay: Duration) {
        autosaveScheduler = { [weak self] in
            guard let self else { return }
            autosaveTask?.cancel()
            autosaveTask = Task { [weak self] in
                do { try await Task.sleep(for: delay) } catch { return }
                await self?.autosave()
            }
        }
        if hasUnsavedChanges { autosaveScheduler?() }
    }

    /// Stops autosaving; a pending autosave is dropped.
    public func stopAutosaving() {
        autosaveScheduler = nil
        autosaveTask?.cancel()
        autosaveTask = nil
    }

    /// Gives up the edits held by snapshots whose saves failed (`pendingSnapshotCount`): the
    /// next save takes a snapshot of the document as it is and writes that alone. For a
    /// writer that cannot write a pending snapshot at all (each save would fail on it again);
    /// what a document let go of in `snapshot(contentType:)` for those snapshots is lost.
    public func discardPendingSnapshots() {
        pendingSnapshots.removeAll()
    }

    /// Cancels the running save, save-as or export: a package save stops at the next file or
    /// 1 MiB chunk the engine writes, a staged write is discarded instead of committed, and
    /// the operation throws a `DocumentError` whose `isCancellation` is true — at once when
    /// nothing of it was written yet, else once it stopped (`SaveRun`). The file keeps its
    /// last good version and the snapshot stays pending for the next save.
    public func cancelSaving() {
        runningSave?.cancel()
    }
}
