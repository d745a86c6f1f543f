/// Where a new document came from: which "new document" action a person chose, so the
/// document can start from the right template.
public struct DocumentCreationSource: Hashable, Sendable {
    public let id: String
    public init(id: String) { self.id = id }
}

/// What the host knows about the creation of a document it asks `makeDocument` for.
public struct DocumentCreationContext: Sendable {
    /// The source of a new document; nil when an existing document is being opened.
    public var creationSource: DocumentCreationSource?
    public init(creationSource: DocumentCreationSource? = nil) { self.creationSource = creationSource }
}
