/// A document that can be saved: a reference type that hands snapshots to a writer.
///
/// Save: `snapshot(contentType:)` on the main actor → `writer(configuration:)` →
/// `write(content:to:previous:progress:)` in the background.
public protocol WritableDocument: AnyObject {
    /// The writer type: `FileWrapperDocumentWriter` for packages, or one of your own.
    associatedtype Writer: DocumentWriter

    /// The types this document saves and exports to.
    static var writableContentTypes: [UTType] { get }

    /// A writer for one write. Runs on the caller; keep it cheap.
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer

    /// The document's state now, for the writer. Runs on the main actor: copy, do not
    /// serialise. The result is `sending`: build it fresh or make it `Sendable`.
    @MainActor func snapshot(contentType: UTType) async throws -> sending Writer.Snapshot
}

extension WritableDocument {
    /// The guide's short name for `DocumentWriteConfiguration`.
    public typealias WriteConfiguration = DocumentWriteConfiguration
}

extension WritableDocument where Self: ReadableDocument {
    /// A document that reads and writes saves to the types it reads, unless it says otherwise.
    public static var writableContentTypes: [UTType] { readableContentTypes }
}

/// A document that is opened and saved: `ReadableDocument & WritableDocument`.
public typealias Document = ReadableDocument & WritableDocument
