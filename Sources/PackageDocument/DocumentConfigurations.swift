import Foundation

/// What a reader is told about the read it is made for.
public struct DocumentReadConfiguration: Sendable {
    /// The type the file is read as.
    public var contentType: UTType
    /// The file being read. Inside `read(from:progress:)` use its `source` parameter.
    public var fileURL: URL?

    /// Carries the wrapper a `FileWrapperDocumentReader` read back to the host, which hands
    /// it to the next `FileWrapperDocumentWriter` as the previous version.
    let fileWrapperHandoff: FileWrapperHandoff

    /// A configuration for reading `fileURL` as `contentType` (for tests and custom hosts;
    /// `DocumentSession` makes its own).
    public init(contentType: UTType, fileURL: URL? = nil) {
        self.init(contentType: contentType, fileURL: fileURL, fileWrapperHandoff: FileWrapperHandoff())
    }

    init(contentType: UTType, fileURL: URL?, fileWrapperHandoff: FileWrapperHandoff) {
        self.contentType = contentType
        self.fileURL = fileURL
        self.fileWrapperHandoff = fileWrapperHandoff
    }
}

/// Why a document is being written.
public enum DocumentSaveOperation: Sendable, Hashable {
    /// Save in place (a person asked, or `save()`).
    case save
    /// Save while editing continues, after a pause in changes.
    case autosave
    /// Save to a new location or type, which the document then lives at.
    case saveAs
    /// Write a copy elsewhere or in another type; the document stays where it is.
    case export
}

/// What a writer is told about the write it is made for.
public struct DocumentWriteConfiguration: Sendable {
    /// The type to write.
    public var contentType: UTType
    /// Where the document will be once written. Inside `write(content:to:previous:progress:)`
    /// use its `destination` parameter, which may be a hidden staging location.
    public var fileURL: URL?
    /// The document's current file when this write replaces it in place, so that unchanged
    /// parts can be reused (the incremental save engine); nil otherwise.
    public var originalContentsURL: URL?
    /// Why the document is written: save, autosave, save as or export.
    public var operation: DocumentSaveOperation
    /// How hard the write works to survive a power loss (fsyncs).
    public var durability: Durability
    /// Raised when the host's save is cancelled (`cancelSaving()` or the task's
    /// cancellation). A writer that calls the save engine itself passes it in
    /// `SaveOptions.cancellation`; one that loops over chunks may check it, as it may check
    /// `Task.isCancelled`. The host checks it too before it commits what the writer wrote.
    public var cancellation: SaveCancellation?

    let fileWrapperHandoff: FileWrapperHandoff
    /// The host's running write, told when this writer's engine starts writing.
    let saveRun: SaveRun?

    /// A configuration for one write (for tests and custom hosts; `DocumentSession` makes
    /// its own); every parameter is the property of the same name.
    public init(
        contentType: UTType, fileURL: URL? = nil, originalContentsURL: URL? = nil,
        operation: DocumentSaveOperation = .save, durability: Durability = .full, cancellation: SaveCancellation? = nil
    ) {
        self.init(
            contentType: contentType, fileURL: fileURL, originalContentsURL: originalContentsURL, operation: operation,
            durability: durability, cancellation: cancellation, fileWrapperHandoff: FileWrapperHandoff(), saveRun: nil)
    }

    init(
        contentType: UTType, fileURL: URL?, originalContentsURL: URL?, operation: DocumentSaveOperation,
        durability: Durability, cancellation: SaveCancellation?, fileWrapperHandoff: FileWrapperHandoff, saveRun: SaveRun?
    ) {
        self.saveRun = saveRun
        self.contentType = contentType
        self.fileURL = fileURL
        self.originalContentsURL = originalContentsURL
        self.operation = operation
        self.durability = durability
        self.cancellation = cancellation
        self.fileWrapperHandoff = fileWrapperHandoff
    }
}

extension DocumentError.Operation {
    init(_ operation: DocumentSaveOperation) {
        switch operation {
        case .save: self = .save
        case .autosave: self = .autosave
        case .saveAs: self = .saveAs
        case .export: self = .export
        }
    }
}
