import Foundation
import PackageCore

/// A UI-free host for one document: what SwiftUI's `DocumentGroup` does for an app, minus
/// the windows. It opens (reader in the background, `apply` on the main actor), saves,
/// saves as, exports, reverts, autosaves after a pause in changes, and cancels.
///
/// Reads and writes run off the main actor under the file coordinator's lock (shared for
/// reads, exclusive for writes), so two hosts — in one process or two — take turns on one
/// document. Every write either completes or leaves the last good version on disk, and no
/// edit is lost: a snapshot whose save failed stays pending and is written first by the
/// next save (Specs/document.md, "What the host guarantees").
@MainActor
public final class DocumentSession<Content: ReadableDocument> where Content.Reader.Source == URL {
    /// The document this session hosts.
    public let document: Content
    /// Where the document lives; shared with the document (it got it in `makeDocument`).
    public let configuration: URLDocumentConfiguration
    /// The type the document was read as, or last saved as.
    public internal(set) var contentType: UTType
    /// Undo registrations count as changes: they drive `hasUnsavedChanges` and autosave.
    public let undoManager = UndoManager()

    /// Changes made since the document was created (+1 per edit or redo, −1 per undo).
    public private(set) var changeCount = 0
    /// The change count the file on disk matches.
    var savedChangeCount = 0
    /// Whether the document has changes its file does not have: edits since the last save,
    /// or snapshots taken by saves that failed (their edits may exist nowhere else).
    public var hasUnsavedChanges: Bool { changeCount != savedChangeCount || !pendingSnapshots.isEmpty }

    /// Snapshots taken whose edits the document's file does not hold yet, oldest first:
    /// those of saves that failed or were cancelled after the snapshot, and those of exports
    /// of a document with unsaved changes. The next save writes them, in order, before it
    /// asks for a new snapshot. (`SnapshotRecord`s of the writer's snapshot type, stored
    /// untyped as a read-only document has no writer.)
    var pendingSnapshots: [AnyObject] = []

    /// How many snapshots wait to be written by the next save (see `hasUnsavedChanges`).
    public var pendingSnapshotCount: Int { pendingSnapshots.count }

    /// The last error of any operation (autosave errors land here, as nobody awaits them).
    public internal(set) var lastError: DocumentError?
    /// The progress of the running (or last) read or write, to observe from any task.
    public internal(set) var progress: ProgressManager?
    /// What the last save or export through a `FileWrapperDocumentWriter` wrote, as the
    /// save engine counted it (files and bytes written, linked, removed). Its `notes` also
    /// say what the save found another writer had saved meanwhile, and which files both
    /// changed (Specs/document.md, "Other writers").
    public internal(set) var lastSaveStatistics: SaveStatistics?
    /// The conflict versions the last save added: files another writer had changed too
    /// since the document read or last saved its package. The save succeeded and kept the
    /// document's version of each; the other writer's is kept inside the package
    /// (`conflicts`, `resolveConflict(at:keep:)`). Empty when nobody else saved meanwhile.
    public internal(set) var lastSaveConflicts: [ConflictVersion] = []
    /// fsync policy of writes: `.full` unless a test or benchmark says otherwise.
    public var durability: Durability = .full

    /// The snapshot last applied, handed to the next `apply` as `previous`.
    var lastAppliedSnapshot: SnapshotRecord<Content.Reader.Snapshot>?
    /// The snapshot last written, with where and as what (a `SnapshotRecord` of the
    /// writer's snapshot type; stored untyped, as a read-only document has no writer).
    var lastWrittenSnapshot: AnyObject?
    /// The wrapper last read from or written to the document's file, for FileWrapper writers.
    var lastFileWrapper: FileWrapper?
    /// The package's tree as the document read it or last saved it (its manifest, taken
    /// under the same lock): the base a save in place merges from when another writer saved
    /// meanwhile (`OtherWriterMerge`). Nil for a flat file, a new document, or a package
    /// that had no manifest when read.
    var baseTree: TreeSnapshot?
    /// What the document's file was when last read or written: a file or a package. Decides
    /// what a type that does not declare its kind is written as (`DocumentForm.written`).
    var formOnDisk: DocumentForm?

    /// The write running now (saves run one at a time), until it has ended — which may be
    /// after its caller heard of its cancellation (`SaveRun`).
    var saveTask: Task<Void, any Error>?
    var runningSave: SaveRun?

    /// Whether a save, save as or export is running — including one whose cancellation was
    /// already reported while it ends its read-only work (`cancelSaving()`).
    public var isSaving: Bool { saveTask != nil }
    var autosaveTask: Task<Void, Never>?
    /// Set by `startAutosaving(after:)`: schedules an autosave after a change.
    var autosaveScheduler: (@MainActor () -> Void)?

    init(document: Content, configuration: URLDocumentConfiguration, contentType: UTType) {
        self.document = document
        self.configuration = configuration
        self.contentType = contentType
        undoManager.onChange = { [weak self] change in
            MainActor.assumeIsolated { self?.updateChangeCount(change) }
        }
    }

    // MARK: Opening and creating

    /// Opens the document at `url`: makes the document, reads the file in the background
    /// under a shared lock, and applies the snapshot on the main actor.
    ///
    /// - Parameters:
    ///   - url: the document's file (a package is a directory).
    ///   - contentType: the type to read as; by default the readable type whose filename
    ///     extension matches, else the first package type for a directory or flat type for
    ///     a file.
    ///   - makeDocument: creates the (empty) document, as `DocumentGroup`'s closure does.
    /// - Throws: `DocumentError` (operation `.open`) wrapping the reader's error.
    /// - Complexity: a `stat` of `url`, the shared lock (and recovery of an interrupted
    ///   save, if any), then what the reader reads: for a package read as a `FileWrapper`,
    ///   one listing per folder and one `lstat` per entry, files read on demand.
    public static func open(
        _ url: URL, contentType: UTType? = nil,
        makeDocument: @MainActor (URLDocumentConfiguration, DocumentCreationContext) async throws -> Content
    ) async throws -> DocumentSession {
        var typeRead = contentType
        do {
            let path = try FileCoordinator.path(of: url)
            let status = try FileSystem.status(path, followSymlinks: true)
            let type = try contentType ?? inferContentType(of: url, isDirectory: status.kind == .directory)
            typeRead = type
            try refuseUnwritableKind(type, of: url, isDirectory: status.kind == .directory)
            let configuration = URLDocumentConfiguration(
                fileURL: url, lastContentModificationDate: date(fromNanoseconds: status.modificationTime))
            let document = try await makeDocument(configuration, DocumentCreationContext())
            let session = DocumentSession(document: document, configuration: configuration, contentType: type)
            try await session.readAndApply(from: url, contentType: type)
            return session
        } catch {
            throw DocumentError(.open, url: url, contentType: typeRead, underlyingError: error)
        }
    }

    /// A new, untitled document (no file yet: `save(to:contentType:)` gives it one).
    ///
    /// - Parameters:
    ///   - contentType: the type it is saved as; by default its first readable type. A
    ///     document that saves refuses a type it does not write, before any edit is made.
    ///   - creationSource: where the new document comes from (a template, an import).
    ///   - makeDocument: creates the (empty) document, as `DocumentGroup`'s closure does.
    /// - Throws: `DocumentError` (operation `.open`, code `unsupportedContentType`).
    public static func create(
        contentType: UTType? = nil, creationSource: DocumentCreationSource? = nil,
        makeDocument: @MainActor (URLDocumentConfiguration, DocumentCreationContext) async throws -> Content
    ) async throws -> DocumentSession {
        guard let type = contentType ?? Content.readableContentTypes.first else {
            throw DocumentError(
                .open, url: nil, code: .unsupportedContentType, reason: "the document type declares no readable type",
                recoverySuggestion: "Give it at least one type in readableContentTypes.")
        }
        if let writable = writableContentTypes, !writable.contains(where: { type.conforms(to: $0) }) {
            throw DocumentError(
                .open, url: nil, contentType: type, code: .unsupportedContentType,
                reason: "the document does not write \(type.identifier), so it could never be saved",
                recoverySuggestion: "Create it as one of the types it writes: "
                    + writable.map(\.identifier).joined(separator: ", ") + ".")
        }
        let configuration = URLDocumentConfiguration(fileURL: nil)
        let document = try await makeDocument(configuration, DocumentCreationContext(creationSource: creationSource))
        return DocumentSession(document: document, configuration: configuration, contentType: type)
    }

    /// Rereads the document's file, discarding unsaved changes (pending snapshots included)
    /// and the undo history.
    ///
    /// - Complexity: as `open(_:contentType:makeDocument:)`, after any running save ends.
    public func revert() async throws {
        guard let url = configuration.fileURL else {
            throw record(
                DocumentError(
                    .revert, url: nil, code: .noFileYet, reason: "it has no file to revert to",
                    recoverySuggestion: "Save it once with save(to:contentType:) first."))
        }
        do {
            try await waitForRunningSave()
            try await readAndApply(from: url, contentType: contentType)
            pendingSnapshots.removeAll()
            undoManager.removeAllActions()
        } catch {
            throw record(DocumentError(.revert, url: url, underlyingError: error))
        }
    }

    // MARK: Change tracking

    /// Records a change (what the undo manager does for each registration, undo and redo).
    /// Documents without undo call `updateChangeCount(.done)` after each edit.
    public func updateChangeCount(_ change: DocumentChange) {
        switch change {
        case .done, .redone: changeCount += 1
        case .undone: changeCount -= 1
        case .cleared: savedChangeCount = changeCount
        }
        if hasUnsavedChanges { autosaveScheduler?() }
    }

    // MARK: Reading

    /// Reads `url` in the background under the shared lock and applies the snapshot.
    func readAndApply(from url: URL, contentType type: UTType) async throws {
        let handoff = FileWrapperHandoff()
        let readConfiguration = DocumentReadConfiguration(contentType: type, fileURL: url, fileWrapperHandoff: handoff)
        let reader = document.reader(configuration: readConfiguration)
        let root = ProgressManager(totalCount: 1)
        progress = root
        let coordinator = FileCoordinator(documentURL: url)
        let snapshot = try await coordinator.withLock(on: url, exclusive: false, handingOver: reader) { reader in
            // On the I/O executor (a reader blocks); the reader and its snapshot are this
            // task's alone, handed over whole.
            nonisolated(unsafe) let handedOver = reader
            nonisolated(unsafe) let read = try await withTaskExecutorPreference(DocumentIOExecutor.shared) {
                nonisolated(unsafe) let snapshot = try await handedOver.read(
                    from: url, progress: root.subprogress(assigningCount: 1))
                // The package as read, under the same lock: the base of the next save's merge.
                handoff.base = DocumentSession.recordedTree(at: url)
                return snapshot
            }
            return read
        }
        let kept = SnapshotRecord(handingOver: snapshot, url: url, contentType: type)
        try await document.apply(snapshot: kept.handOver(), previous: lastAppliedSnapshot?.handOver())
        lastAppliedSnapshot = kept
        if let wrapper = handoff.produced { lastFileWrapper = wrapper }
        baseTree = handoff.base
        contentType = type
        savedChangeCount = changeCount
        if let status = try? FileSystem.status(FileCoordinator.path(of: url), followSymlinks: true) {
            configuration.update(lastContentModificationDate: DocumentSession.date(fromNanoseconds: status.modificationTime))
            formOnDisk = DocumentForm(status.kind)
        }
    }

    // MARK: Helpers

    /// Waits until no save runs (saves are serialised: one at a time, in order).
    func waitForRunningSave() async throws {
        while let running = saveTask { _ = await running.result }
    }

    func record(_ error: DocumentError) -> DocumentError {
        lastError = error
        return error
    }

    static func date(fromNanoseconds nanoseconds: Int64) -> Date {
        let parts = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return Date(timeIntervalSince1970: Double(parts.quotient) + Double(parts.remainder) / 1_000_000_000)
    }

    /// The readable type for `url`: by filename extension, else by kind (package for a
    /// directory, flat for a file — a type that does not declare its kind fits either),
    /// else the first readable type.
    static func inferContentType(of url: URL, isDirectory: Bool) throws -> UTType {
        let types = Content.readableContentTypes
        let pathExtension = url.pathExtension.lowercased()
        if !pathExtension.isEmpty, let match = types.first(where: { $0.preferredFilenameExtension == pathExtension }) {
            return match
        }
        if let match = types.first(where: { $0.declaresKind && $0.isPackage == isDirectory }) { return match }
        if let match = types.first(where: { !$0.declaresKind }) { return match }
        guard let first = types.first else {
            throw DocumentError(
                .open, url: url, code: .unsupportedContentType, reason: "the document type declares no readable type",
                recoverySuggestion: "Give it at least one type in readableContentTypes.")
        }
        return first
    }

    /// The tree the manifest of the package at `url` records; nil for a flat file or a
    /// package without a (sound) manifest. Call under the document's lock.
    ///
    /// - Complexity: one load of the manifest (its index and deltas): O(entries).
    nonisolated static func recordedTree(at url: URL) -> TreeSnapshot? {
        guard let path = try? FileCoordinator.path(of: url),
            (try? FileSystem.status(path, followSymlinks: true))?.kind == .directory,
            let manifest = (try? PackageManifest.load(packagePath: path)) ?? nil
        else { return nil }
        return manifest.snapshot
    }

    /// The types the document writes, or nil for a document that only reads.
    static var writableContentTypes: [UTType]? {
        (Content.self as? any WritableDocument.Type).map { $0.writableContentTypes }
    }

    /// Refuses to open, as a type the document saves, an item it could never save back: a
    /// folder as a flat-file type (one that declares it), or a file as a package type. The
    /// person hears of it now, not after editing. A document that only reads, or does not
    /// write `type`, opens anything its reader reads.
    static func refuseUnwritableKind(_ type: UTType, of url: URL, isDirectory: Bool) throws {
        guard let writable = writableContentTypes, writable.contains(where: { type.conforms(to: $0) }) else { return }
        let form = DocumentForm.written(as: type, known: isDirectory ? .package : .file, wrapperWriter: false)
        guard let form, form != (isDirectory ? .package : .file) else { return }
        let found = isDirectory ? "a folder" : "a file"
        throw DocumentError(
            .open, url: url, contentType: type, code: .unsupportedContentType,
            reason: "it is \(found), and \(type.identifier) is written as \(form.described): it could be opened "
                + "but never saved back",
            recoverySuggestion: isDirectory
                ? "Open a file of that type instead, or declare the type as a package (conformingTo: .package)."
                : "Open a package (a folder) of that type instead, or declare the type as a flat file.")
    }
}

/// A snapshot kept between operations to be handed to the next one as `previous`.
///
/// The region checker cannot see that a snapshot sent to `apply` or `write` comes back to
/// the host's sole keeping once the call returns, so the hand-over is asserted here, in one
/// place. It holds because of the contract readers, writers and documents follow (the
/// guide's): they do not keep a snapshot after the call that received it returns.
final class SnapshotRecord<Snapshot> {
    private nonisolated(unsafe) let snapshot: Snapshot
    /// Where and as what it was last meant to be (or was) written.
    var url: URL
    var contentType: UTType

    /// Keeps `snapshot` (about to be sent to a call) for later.
    init(handingOver snapshot: Snapshot, url: URL, contentType: UTType) {
        self.snapshot = snapshot
        self.url = url
        self.contentType = contentType
    }

    /// The kept snapshot, to send to the next call.
    func handOver() -> sending Snapshot {
        nonisolated(unsafe) let value = snapshot
        return value
    }
}
