import Foundation

extension DocumentSession where Content: WritableDocument, Content.Writer.Destination == URL {
    /// Saves the document to its file.
    ///
    /// Takes a snapshot on the main actor, then writes it in the background under the
    /// exclusive lock, with the last snapshot written here as `previous`. Edits made while
    /// the save runs stay unsaved. Saves run one at a time, in order.
    /// - Throws: `DocumentError` (operation `.save`); the file keeps its last good version.
    public func save() async throws {
        guard let url = configuration.fileURL else {
            throw record(
                DocumentError(
                    .save, url: nil,
                    underlyingError: CocoaError(
                        .fileNoSuchFile,
                        userInfo: [NSLocalizedDescriptionKey: "the document has no file yet: use save(to:contentType:)"])))
        }
        try await write(to: url, contentType: contentType, operation: .save)
    }

    /// Saves the document to `url` (as `contentType`, by default its current type), which
    /// it lives at from then on.
    public func save(to url: URL, contentType: UTType? = nil) async throws {
        try await write(to: url, contentType: contentType ?? self.contentType, operation: .saveAs)
    }

    /// Writes a copy of the document to `url` as `contentType`; the document stays where it
    /// is, with its changes still unsaved. An export that fails or is cancelled leaves
    /// nothing at `url`.
    ///
    /// Exporting a package document as `.zip` (a type it does not write itself) flattens
    /// it: the package is written to a hidden directory beside `url`, packed into a ZIP
    /// archive that replaces `url` atomically, and the directory removed.
    public func export(to url: URL, contentType: UTType) async throws {
        if contentType.conforms(to: .zip), !Content.writableContentTypes.contains(where: { contentType.conforms(to: $0) }),
            let packageType = Content.writableContentTypes.first(where: { $0.conforms(to: .package) })
        {
            try await exportArchive(to: url, packageType: packageType)
            return
        }
        try await write(to: url, contentType: contentType, operation: .export)
    }

    /// Saves if there are unsaved changes and a file to save to; errors are recorded in
    /// `lastError` (nobody awaits an autosave).
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

    /// Cancels the running save, save-as or export. A write not yet swapped in is
    /// discarded; the file keeps its last good version.
    public func cancelSaving() {
        saveTask?.cancel()
    }

    // MARK: The write

    /// Runs one write after the running one, as a task `cancelSaving()` can cancel.
    func write(to url: URL, contentType: UTType, operation: DocumentSaveOperation) async throws {
        let documentOperation: DocumentError.Operation
        switch operation {
        case .save: documentOperation = .save
        case .autosave: documentOperation = .autosave
        case .saveAs: documentOperation = .saveAs
        case .export: documentOperation = .export
        }
        do {
            try await waitForRunningSave()
            let task = Task { @MainActor in
                try await self.performWrite(to: url, contentType: contentType, operation: operation)
            }
            saveTask = task
            defer { saveTask = nil }
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw record(DocumentSession.wrap(error, documentOperation, url))
        }
    }

    /// Snapshot on the main actor, write in the background under the exclusive lock, then
    /// record what was written.
    private func performWrite(to url: URL, contentType: UTType, operation: DocumentSaveOperation) async throws {
        guard Content.writableContentTypes.contains(where: { contentType.conforms(to: $0) }) else {
            throw CocoaError(
                .fileWriteUnsupportedScheme,
                userInfo: [NSLocalizedDescriptionKey: "the document does not write \(contentType.identifier)"])
        }
        let changeCountAtSnapshot = changeCount
        let path = try FileCoordinator.path(of: url)
        let currentPath = try configuration.fileURL.map { try FileCoordinator.path(of: $0) }
        let inPlace = operation != .export && currentPath == path && contentType == self.contentType

        let content = try await document.snapshot(contentType: contentType)
        let kept = SnapshotRecord(handingOver: content, url: url, contentType: contentType)
        let previousRecord = lastWrittenSnapshot as? SnapshotRecord<Content.Writer.Snapshot>
        let previous = inPlace && previousRecord?.url == url && previousRecord?.contentType == contentType
            ? previousRecord : nil

        let handoff = FileWrapperHandoff(previous: lastFileWrapper)
        let writeConfiguration = DocumentWriteConfiguration(
            contentType: contentType, fileURL: url, originalContentsURL: inPlace ? url : nil, operation: operation,
            durability: durability, fileWrapperHandoff: handoff)
        let writer = document.writer(configuration: writeConfiguration)
        let root = ProgressManager(totalCount: 1)
        progress = root
        let durability = self.durability

        let work = WriteWork(writer: writer, content: kept.handOver(), previous: previous?.handOver())
        let writesAtomically = Content.Writer.self is any WritesDestinationAtomically.Type
        try await FileCoordinator(documentURL: url).withLock(on: url, exclusive: true, handingOver: work) { work in
            if writesAtomically {
                try await work.run(to: url, progress: root.subprogress(assigningCount: 1))
            } else {
                let staging = try StagedDestination(for: url)
                do {
                    try await work.run(to: staging.url, progress: root.subprogress(assigningCount: 1))
                    try Task.checkCancellation()
                    try staging.commit(durability: durability)
                } catch {
                    staging.discard()
                    throw error
                }
            }
        }

        lastSaveStatistics = handoff.statistics
        guard operation != .export else { return }
        savedChangeCount = changeCountAtSnapshot
        lastWrittenSnapshot = kept
        if let written = handoff.produced { lastFileWrapper = written }
        if operation == .saveAs {
            configuration.update(fileURL: url)
            self.contentType = contentType
        }
        if let status = try? FileSystem.status(path, followSymlinks: true) {
            configuration.update(lastContentModificationDate: DocumentSession.date(fromNanoseconds: status.modificationTime))
        }
    }
}

/// What one write hands to the background: the writer and its two snapshots.
struct WriteWork<Writer: DocumentWriter> where Writer.Destination == URL {
    var writer: Writer
    var content: Writer.Snapshot
    var previous: Writer.Snapshot?

    /// Runs the write. The work was handed over whole (`sending`), so its snapshots belong
    /// to this task alone; the region checker cannot split one region into the call's two
    /// `sending` arguments, hence the asserted hand-over of each.
    consuming func run(to destination: URL, progress: consuming Subprogress) async throws {
        nonisolated(unsafe) let content = self.content
        nonisolated(unsafe) let previous = self.previous
        try await writer.write(content: content, to: destination, previous: previous, progress: progress)
    }
}
