import Foundation
import PackageCore

/// The write behind save, save as, autosave and export (Specs/document.md, "What the host
/// guarantees").
///
/// 1. Everything checkable is checked before the document is asked for a snapshot: the
///    type, the destination's folder, what is in the way, write access, the item the lock
///    is taken on (`WriteDestination`).
/// 2. Snapshots taken by earlier saves that failed (`pendingSnapshots`) are written first,
///    oldest first, each committed to the document's file before the next: a document that
///    cleared its change flags in `snapshot(contentType:)` handed its edits to them.
/// 3. Only then is the new snapshot taken, and kept pending until it is on disk.
/// 4. Each write takes the exclusive lock itself, in the background (the main actor never
///    holds it: a coordinated read on the main actor cannot wait for a save that waits for
///    the main actor).
extension DocumentSession where Content: WritableDocument, Content.Writer.Destination == URL {
    typealias WrittenSnapshot = SnapshotRecord<Content.Writer.Snapshot>

    /// Runs one write after the running one, as a task `cancelSaving()` can cancel; any
    /// failure becomes a `DocumentError`, recorded in `lastError`.
    func write(
        to url: URL, contentType: UTType, operation: DocumentSaveOperation, archiving packageType: UTType? = nil
    ) async throws {
        let documentOperation = DocumentError.Operation(operation)
        do {
            try await waitForRunningSave()
            let run = SaveRun()
            let task = Task { @MainActor in
                try await self.performWrite(
                    to: url, contentType: contentType, operation: operation, archiving: packageType, run: run)
            }
            run.attach(task)
            saveTask = task
            runningSave = run
            // The write ends when it ends; its caller may hear of a cancellation earlier.
            Task { @MainActor [weak self] in
                let result = await task.result
                if let self, self.saveTask == task {
                    self.saveTask = nil
                    self.runningSave = nil
                }
                run.finish(result)
            }
            try await withTaskCancellationHandler {
                try await run.wait()
            } onCancel: {
                run.cancel()
            }
        } catch {
            // The type belongs in the message when it is not the document's own.
            let shownType = operation == .export || contentType != self.contentType ? contentType : nil
            throw record(DocumentError(documentOperation, url: url, contentType: shownType, underlyingError: error))
        }
    }

    private func performWrite(
        to url: URL, contentType: UTType, operation: DocumentSaveOperation, archiving packageType: UTType?,
        run: SaveRun
    ) async throws {
        let documentOperation = DocumentError.Operation(operation)
        let writtenType = packageType ?? contentType
        let writable = Content.writableContentTypes
        guard writable.contains(where: { writtenType.conforms(to: $0) }) else {
            throw DocumentError.unsupportedContentType(contentType, documentOperation, url: url, supported: writable)
        }
        let form = writtenForm(of: writtenType)
        let destination = try WriteDestination(url, form: packageType == nil ? form : .file, operation: documentOperation)
        try WritePlan.checkCancellation(run.cancellation)
        if operation == .export {
            try await exportWrites(
                to: destination, contentType: writtenType, form: form, archive: packageType != nil, run: run)
        } else {
            try await saveWrites(to: destination, contentType: contentType, form: form, operation: operation, run: run)
        }
    }

    // MARK: Save and save as

    /// Writes the pending snapshots, then a new one, each committed to `destination`, which
    /// the document lives at from the first success on.
    private func saveWrites(
        to destination: WriteDestination, contentType: UTType, form: DocumentForm?, operation: DocumentSaveOperation,
        run: SaveRun
    ) async throws {
        let route = WritePlan.Route(for: Content.Writer.self, form: form)
        let unitsPerWrite = 1 + route.unitsAfterWrites
        let root = ProgressManager(totalCount: (pendingSnapshots.count + 1) * unitsPerWrite)
        progress = root
        while let replayed = pendingSnapshots.first as? WrittenSnapshot {
            let handoff = try await writeOnce(
                replayed, to: destination, contentType: contentType, operation: operation, route: route,
                run: run, progress: root)
            adopt(replayed, at: destination, contentType: contentType, handoff: handoff, savedChangeCount: nil)
        }
        try WritePlan.checkCancellation(run.cancellation)
        let changeCountAtSnapshot = changeCount
        let content = try await document.snapshot(contentType: contentType)
        let snapshot = WrittenSnapshot(handingOver: content, url: destination.url, contentType: contentType)
        // From here on the snapshot may hold edits the document let go of: kept until written.
        pendingSnapshots.append(snapshot)
        let handoff = try await writeOnce(
            snapshot, to: destination, contentType: contentType, operation: operation, route: route,
            run: run, progress: root)
        adopt(snapshot, at: destination, contentType: contentType, handoff: handoff, savedChangeCount: changeCountAtSnapshot)
    }

    /// One snapshot written and committed to `destination`.
    private func writeOnce(
        _ snapshot: WrittenSnapshot, to destination: WriteDestination, contentType: UTType,
        operation: DocumentSaveOperation, route: WritePlan.Route, run: SaveRun, progress root: ProgressManager
    ) async throws -> FileWrapperHandoff {
        let inPlace = isDocumentFile(destination, contentType: contentType)
        // `previous` is what is at the writer's destination: a staged one starts empty.
        let previous = route == .direct && inPlace ? lastWritten(at: destination, contentType: contentType) : nil
        let handoff = FileWrapperHandoff(previous: lastFileWrapper)
        if inPlace { handoff.mergeBase = baseTree }
        let writeConfiguration = DocumentWriteConfiguration(
            contentType: contentType, fileURL: destination.url, originalContentsURL: inPlace ? destination.url : nil,
            operation: operation, durability: durability, cancellation: run.cancellation, fileWrapperHandoff: handoff,
            saveRun: run)
        let writer = document.writer(configuration: writeConfiguration)
        let work = WriteWork(writer: writer, content: snapshot.handOver(), previous: previous?.handOver())
        var plan = WritePlan(
            destination: destination, route: route, finish: .commit, operation: DocumentError.Operation(operation),
            durability: durability, cancellation: run.cancellation, run: run, progress: root)
        plan.handoff = handoff
        if let statistics = try await Self.perform([work], plan: plan) { handoff.statistics = statistics }
        return handoff
    }

    /// Records that `snapshot` is on disk at `destination`: no longer pending, the previous
    /// snapshot of the next save there, and the document's file from now on.
    private func adopt(
        _ snapshot: WrittenSnapshot, at destination: WriteDestination, contentType: UTType, handoff: FileWrapperHandoff,
        savedChangeCount: Int?
    ) {
        pendingSnapshots.removeAll { $0 === snapshot }
        snapshot.url = destination.url
        snapshot.contentType = contentType
        lastWrittenSnapshot = snapshot
        if let written = handoff.produced { lastFileWrapper = written }
        lastSaveStatistics = handoff.statistics
        lastSaveConflicts = handoff.merge?.conflicts ?? []
        baseTree = handoff.base
        if !isDocumentFile(destination, contentType: contentType) {
            configuration.update(fileURL: destination.url)
            self.contentType = contentType
        }
        if let savedChangeCount { self.savedChangeCount = savedChangeCount }
        if let status = try? FileSystem.status(destination.path, followSymlinks: true) {
            configuration.update(lastContentModificationDate: DocumentSession.date(fromNanoseconds: status.modificationTime))
            formOnDisk = DocumentForm(status.kind)
        }
    }

    // MARK: Export

    /// Writes a copy: the new snapshot alone, or — when earlier saves failed — the pending
    /// snapshots then the new one, chained into one staged destination committed once. The
    /// document's file gains nothing, so a snapshot of a document with unsaved changes stays
    /// pending for its next save.
    private func exportWrites(
        to destination: WriteDestination, contentType: UTType, form: DocumentForm?, archive: Bool, run: SaveRun
    ) async throws {
        let replays = pendingSnapshots.compactMap { $0 as? WrittenSnapshot }
        let chained = archive || !replays.isEmpty
        let route: WritePlan.Route =
            chained
            ? .staged(archive ? .package : form.map { $0 == .package ? .package : .file } ?? .either)
            : WritePlan.Route(for: Content.Writer.self, form: form)
        let root = ProgressManager(totalCount: replays.count + 1 + route.unitsAfterWrites)
        progress = root
        let keepsPending = hasUnsavedChanges
        let content = try await document.snapshot(contentType: contentType)
        let snapshot = WrittenSnapshot(handingOver: content, url: destination.url, contentType: contentType)
        if keepsPending { pendingSnapshots.append(snapshot) }
        try WritePlan.checkCancellation(run.cancellation)

        var works: [WriteWork<Content.Writer>] = []
        var handoffs: [FileWrapperHandoff] = []
        var previous: WrittenSnapshot?
        for written in replays + [snapshot] {
            let handoff = FileWrapperHandoff(previous: lastFileWrapper, after: handoffs.last)
            let writeConfiguration = DocumentWriteConfiguration(
                contentType: contentType, fileURL: destination.url, originalContentsURL: nil, operation: .export,
                durability: durability, cancellation: run.cancellation, fileWrapperHandoff: handoff, saveRun: run)
            let writer = document.writer(configuration: writeConfiguration)
            works.append(WriteWork(writer: writer, content: written.handOver(), previous: previous?.handOver()))
            handoffs.append(handoff)
            previous = written
        }
        let plan = WritePlan(
            destination: destination, route: route, finish: archive ? .archive : .commit, operation: .export,
            durability: durability, cancellation: run.cancellation, run: run, progress: root)
        let statistics = try await Self.perform(works, plan: plan)
        lastSaveStatistics = statistics ?? handoffs.last?.statistics
    }

    // MARK: Helpers

    /// What a write of `contentType` puts at its destination; nil when the writer decides
    /// (`DocumentForm.written`).
    func writtenForm(of contentType: UTType) -> DocumentForm? {
        DocumentForm.written(
            as: contentType, known: formOnDisk, wrapperWriter: DocumentForm.isWrapperWriter(Content.Writer.self))
    }

    /// Whether `destination` as `contentType` is the document's file as its type.
    private func isDocumentFile(_ destination: WriteDestination, contentType: UTType) -> Bool {
        guard contentType == self.contentType, let url = configuration.fileURL else { return false }
        return (try? PackageLocation(DocumentError.displayPath(url))) == destination.location
    }

    /// The snapshot last written to `destination` as `contentType`, if that is what is there.
    private func lastWritten(at destination: WriteDestination, contentType: UTType) -> WrittenSnapshot? {
        guard let written = lastWrittenSnapshot as? WrittenSnapshot, written.contentType == contentType,
            (try? PackageLocation(DocumentError.displayPath(written.url))) == destination.location
        else { return nil }
        return written
    }

    /// The background part of a write: takes the exclusive lock (waiting off the cooperative
    /// pool), runs the writers in order, and commits — or discards a staged destination on
    /// any failure or cancellation. Returns the engine's statistics when it saved a staged
    /// package.
    nonisolated static func perform(
        _ works: sending [WriteWork<Content.Writer>], plan: WritePlan
    ) async throws -> SaveStatistics? {
        let url = plan.destination.url
        return try await FileCoordinator(documentURL: url).withLock(on: url, exclusive: true, handingOver: works) { works in
            // Handed over whole: the executor preference's closure only forwards them.
            nonisolated(unsafe) let handedOver = works
            return try await withTaskExecutorPreference(DocumentIOExecutor.shared) {
                try await run(handedOver, plan: plan)
            }
        }
    }

    /// `perform` under the lock, on the I/O executor.
    private nonisolated static func run(_ works: sending [WriteWork<Content.Writer>], plan: WritePlan) async throws
        -> SaveStatistics?
    {
        let url = plan.destination.url
        // A package saved in place by the engine writes only after its read-only planning
        // (the writer says when); anything else may create something from here on.
        if !(plan.route == .direct && plan.destination.existing?.kind == .directory) { plan.run.markWriting() }
        try WritePlan.checkCancellation(plan.cancellation)
        guard case .staged(let shape) = plan.route else {
            for work in works { try await work.run(to: url, progress: plan.progress.subprogress(assigningCount: 1)) }
            // The package as saved, under the same lock: the base of the next save's merge.
            plan.handoff?.base = recordedTree(at: url)
            return nil
        }
        let staged = try StagedDestination(
            for: plan.destination.location, shape: shape,
            permissions: plan.destination.existing.map { $0.permissions & 0o7777 } ?? 0o644)
        do {
            for work in works {
                try await work.run(to: staged.url, progress: plan.progress.subprogress(assigningCount: 1))
                try WritePlan.checkCancellation(plan.cancellation)
            }
            try plan.checkWritten(staged)
            switch plan.finish {
            case .commit:
                let progress: Subprogress? = shape == .package ? plan.progress.subprogress(assigningCount: 1) : nil
                let statistics = try staged.commit(
                    durability: plan.durability, cancellation: plan.cancellation, progress: progress,
                    mergeBase: plan.handoff?.mergeBase)?.statistics
                plan.handoff?.merge = staged.merge
                plan.handoff?.base = recordedTree(at: url)
                return statistics
            case .archive:
                try staged.packAsArchive(at: plan.destination.path, durability: plan.durability, cancellation: plan.cancellation)
                plan.progress.complete(count: 1)
                return nil
            }
        } catch {
            staged.discard()
            throw error
        }
    }
}

extension WritePlan.Route {
    /// Straight to the destination for a writer atomic by itself, else staged by what the
    /// write puts there (`DocumentForm.written`: never nil for such a writer).
    init<Writer: DocumentWriter>(for writer: Writer.Type, form: DocumentForm?) {
        if DocumentForm.isWrapperWriter(writer) {
            self = .direct
        } else {
            self = .staged(form == .package ? .package : .file)
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

extension WritePlan {
    /// Refuses a staged destination the writer left empty or of the wrong kind.
    func checkWritten(_ staged: StagedDestination) throws {
        let kind = try staged.writtenKind()
        let detail: String
        switch (staged.shape, kind) {
        case (_, nil):
            detail = "returned without writing anything at its destination"
        case (.package, let kind?) where kind != .directory:
            detail = "wrote a \(kind) where a package (a folder) was expected"
        case (.file, let kind?) where kind != .regular:
            detail = "wrote a \(kind) where a file was expected"
        case (.either, let kind?) where kind != .regular && kind != .directory:
            detail = "wrote a \(kind) where a file or a package (a folder) was expected"
        default:
            return
        }
        throw DocumentError.nothingWritten(operation, url: destination.url, detail: detail)
    }
}
