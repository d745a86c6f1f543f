import PackageCore

/// What a document is on disk: a flat file or a package (a folder).
///
/// A type that declares its kind (`UTType.declaresKind`: the built-in types, and types given
/// a parent in code) says which. A type declared as the guide declares its notebook —
/// `UTType(exportedAs: "com.mycompany.notebook")`, whose conformance an Info.plist would
/// give on Apple platforms — does not: the host then takes the kind of the item it opened
/// or last wrote, and for a new document lets a `FileWrapperDocumentWriter`'s wrapper decide
/// (Specs/document.md, "Packages and flat files").
enum DocumentForm: Sendable, Equatable {
    case file
    case package

    /// The form of an item of `kind` on disk.
    init(_ kind: FileKind) { self = kind == .directory ? .package : .file }

    /// "a package (a folder)" or "a file", for messages.
    var described: String { self == .package ? "a package (a folder)" : "a file" }

    /// What a write of `contentType` puts at its destination; nil when the writer decides
    /// (a FileWrapper writer of a type that does not declare its kind, for a document whose
    /// form is not known yet).
    ///
    /// - Parameters:
    ///   - contentType: the type written.
    ///   - known: the form of the item the document was read from or last written to.
    ///   - wrapperWriter: whether the writer writes a `FileWrapper` (whose kind it chooses).
    static func written(as contentType: UTType, known: DocumentForm?, wrapperWriter: Bool) -> DocumentForm? {
        if contentType.isPackage { return .package }
        if contentType.declaresKind { return .file }
        if let known { return known }
        return wrapperWriter ? nil : .file
    }

    /// Whether a writer of `writer`'s type chooses the kind of what it writes (a
    /// `FileWrapperDocumentWriter`: its wrapper is a file or a folder).
    static func isWrapperWriter<Writer: DocumentWriter>(_ writer: Writer.Type) -> Bool {
        writer is any WritesDestinationAtomically.Type
    }
}
