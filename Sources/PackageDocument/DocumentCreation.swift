/// Where a new document came from: which "new document" action a person chose, so the
/// document can start from the right template.
public struct DocumentCreationSource: Hashable, Sendable {
    /// The action's identifier, chosen by the app ("blank", "from-template").
    public let id: String
    /// The source named `id`.
    public init(id: String) { self.id = id }
}

/// What the host knows about the creation of a document it asks `makeDocument` for.
public struct DocumentCreationContext: Sendable {
    /// The source of a new document; nil when an existing document is being opened.
    public var creationSource: DocumentCreationSource?
    /// A context for a document created from `creationSource` (nil: opened from a file).
    public init(creationSource: DocumentCreationSource? = nil) { self.creationSource = creationSource }
}
