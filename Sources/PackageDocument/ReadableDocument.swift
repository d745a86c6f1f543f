/// A document that can be opened: a reference type whose state comes from a reader.
///
/// Open: `reader(configuration:)` → `read(from:progress:)` in the background →
/// `apply(snapshot:previous:)` on the main actor.
public protocol ReadableDocument: AnyObject {
    /// The reader type: `FileWrapperDocumentReader` for packages, or one of your own.
    associatedtype Reader: DocumentReader

    /// The types this document opens.
    static var readableContentTypes: [UTType] { get }

    /// A reader for one read. Runs on the caller; keep it cheap.
    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader

    /// Takes a snapshot the reader produced. `previous` is the snapshot applied before
    /// (on revert), nil on first open. Runs on the main actor: keep it cheap.
    @MainActor func apply(snapshot: sending Reader.Snapshot, previous: sending Reader.Snapshot?) async throws
}

extension ReadableDocument {
    /// The guide's short name for `DocumentReadConfiguration`.
    public typealias ReadConfiguration = DocumentReadConfiguration
}
