import Foundation
import PackageCore

/// A writer built from a closure that turns a snapshot into a `FileWrapper`: the convenient
/// way to write flat files and packages alike.
///
/// Two closure forms, as the guide shows both: `{ snapshot in … }`, and
/// `{ snapshot, previous in … }` where `previous` is the wrapper last read from or written
/// to this document's file (nil for a new document): reuse its unchanged children and only
/// the edited ones are written. The wrapper is written with
/// `FileWrapper.write(to:options:originalContentsURL:)`, atomically, and with the document's
/// current file as the original contents, so the save engine can reuse what did not change.
public struct FileWrapperDocumentWriter<Snapshot>: DocumentWriter, WritesDestinationAtomically {
    public typealias Destination = URL

    enum MakeWrapper {
        case fromSnapshot((Snapshot) async throws -> FileWrapper)
        case fromSnapshotAndPrevious((Snapshot, FileWrapper?) async throws -> FileWrapper)
    }

    private let configuration: DocumentWriteConfiguration
    private let makeWrapper: MakeWrapper
    private var contentMerge: ContentMerge?

    /// A writer whose closure builds the wrapper from the snapshot alone.
    public init(
        _ configuration: sending DocumentWriteConfiguration, write: @escaping (Snapshot) async throws -> FileWrapper
    ) {
        self.configuration = configuration
        makeWrapper = .fromSnapshot(write)
    }

    /// A writer whose closure also gets the previous wrapper, to reuse its children.
    public init(
        _ configuration: sending DocumentWriteConfiguration,
        write: @escaping (Snapshot, FileWrapper?) async throws -> FileWrapper
    ) {
        self.configuration = configuration
        makeWrapper = .fromSnapshotAndPrevious(write)
    }

    /// This writer, merging the contents of the files `contentMerge` covers when another
    /// writer changed them too since the document read the package (a `metadata.json` both
    /// added a page to): the merged bytes are saved instead of keeping the other writer's
    /// version as a conflict version (Specs/document.md, "Other writers").
    /// - Parameter contentMerge: the app's merge; nil merges file by file.
    public func merging(_ contentMerge: ContentMerge?) -> Self {
        var copy = self
        copy.contentMerge = contentMerge
        return copy
    }

    /// Builds the wrapper and writes it to `destination` (the final location: the write is
    /// atomic by itself, so the host gives this writer no staging location, except to chain
    /// several writes of one export).
    ///
    /// The write goes through the save engine with the host's durability and its
    /// cancellation: `cancelSaving()` or the task's cancellation stops it at the next file or
    /// 1 MiB chunk, leaving the last good version. The engine's byte counts show in this
    /// write's progress (`totalByteCount`, `completedByteCount`).
    ///
    /// - Complexity: the closure, then the write: in place, through the incremental save
    ///   engine (only the files whose content changed); elsewhere, every file.
    public nonisolated func write(
        content: sending Snapshot, to destination: URL, previous: sending Snapshot?, progress: consuming Subprogress
    ) async throws {
        let manager = progress.start(totalCount: 2)
        let wrapper: FileWrapper
        switch makeWrapper {
        case .fromSnapshot(let make): wrapper = try await make(content)
        case .fromSnapshotAndPrevious(let make): wrapper = try await make(content, configuration.fileWrapperHandoff.previous)
        }
        manager.complete(count: 1)
        try Task.checkCancellation()
        // An export is a copy: the wrapper must keep describing the document's own file.
        let options: FileWrapper.WritingOptions =
            configuration.operation == .export ? [.atomic] : [.atomic, .withNameUpdating]
        let cancellation = configuration.cancellation ?? SaveCancellation()
        let saveRun = configuration.saveRun
        var saveOptions = SaveOptions(
            durability: configuration.durability,
            progress: { step in
                // The engine reports its plan before it writes its first file.
                saveRun?.markWriting()
                manager.withProperties { values in
                    values.totalByteCount = UInt64(max(0, step.totalBytes))
                    values.completedByteCount = UInt64(max(0, step.completedBytes))
                    values.totalFileCount = step.totalFiles
                    values.completedFileCount = step.completedFiles
                }
            },
            cancellation: cancellation)
        let originalContentsURL = configuration.originalContentsURL
        // In place, under the exclusive lock: what another writer saved since the document
        // read or last saved the package is merged in, never overwritten unseen.
        var merge: OtherWriterMerge?
        if originalContentsURL != nil, wrapper.isDirectory, let base = configuration.fileWrapperHandoff.mergeBase {
            merge = try OtherWriterMerge.merge(
                into: wrapper, packagePath: try FileCoordinator.path(of: destination), base: base,
                durability: configuration.durability, contentMerge: contentMerge)
            saveOptions.conflictsRecord = merge?.conflictsRecord
        }
        // The engine checks the flag before each file and after each chunk; the task's
        // cancellation raises it, whichever thread the engine runs on.
        let statistics = try await withTaskCancellationHandler {
            try wrapper.write(
                to: destination, options: options, originalContentsURL: originalContentsURL, saveOptions: saveOptions
            ).statistics
        } onCancel: {
            cancellation.cancel()
        }
        configuration.fileWrapperHandoff.produced = wrapper
        var noted = statistics
        if let merge {
            noted.notes += merge.notes
            configuration.fileWrapperHandoff.merge = merge
        }
        configuration.fileWrapperHandoff.statistics = noted
        manager.complete(count: 1)
    }
}

/// A writer whose write to its destination is atomic by itself (it either completes or
/// leaves the destination as it was, through the save engine): the host hands it the final
/// location instead of a staging one, so that an in-place incremental save can reuse the
/// current file.
protocol WritesDestinationAtomically: SendableMetatype {}
