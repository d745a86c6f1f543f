import Foundation

/// The problems the host finds itself, before or around a reader or writer.
extension DocumentError {
    /// `save()` of a document that has no file yet.
    static func noFileYet(_ operation: Operation) -> DocumentError {
        DocumentError(
            operation, url: nil, code: .noFileYet, reason: "it has no file yet",
            recoverySuggestion: "Save it once with save(to:contentType:) to give it one; the edits stay in the document meanwhile.")
    }

    /// A type the document does not read or write.
    static func unsupportedContentType(
        _ type: UTType, _ operation: Operation, url: URL?, supported: [UTType]
    ) -> DocumentError {
        let verb = operation.writes ? "write" : "read"
        let list = supported.map(\.identifier).joined(separator: ", ")
        return DocumentError(
            operation, url: url, contentType: type, code: .unsupportedContentType,
            reason: "the document does not \(verb) \(type.identifier)",
            recoverySuggestion: supported.isEmpty
                ? "This document type declares no type to \(verb)."
                : "Choose one of the types it \(verb)s: \(list).")
    }

    /// A ZIP export of a document that writes no package type.
    static func notAPackageType(url: URL, writable: [UTType]) -> DocumentError {
        let list = writable.map(\.identifier).joined(separator: ", ")
        return DocumentError(
            .export, url: url, contentType: .zip, code: .notAPackageType,
            reason: "none of the types the document writes (\(list)) is a package type, so there is no package "
                + "to flatten into a ZIP archive",
            recoverySuggestion: "Export it as one of its own types instead (\(list)).")
    }

    /// The folder that should hold the destination is missing or not a folder.
    static func folderMissing(_ folder: String, _ operation: Operation, url: URL, cause: (any Error)?) -> DocumentError {
        DocumentError(
            operation, url: url, code: .folderMissing,
            reason: "the folder '\(folder)' does not exist" + (cause.map { " (\($0))" } ?? ""),
            recoverySuggestion: "Create the folder, or choose another location. " + editsStay(operation))
    }

    /// The folder or package that would be written cannot be.
    static func notWritable(_ path: String, isFolder: Bool, _ operation: Operation, url: URL, cause: FileSystemError)
        -> DocumentError
    {
        let what = isFolder ? "the folder '\(path)'" : "'\(path)'"
        let code: Code = cause.errno == .readOnlyFileSystem ? .readOnlyVolume : .notWritable
        let fix =
            cause.errno == .readOnlyFileSystem
            ? "Save it on another disk with save(to:contentType:)."
            : "Check the permissions of \(what) (and that it is not immutable: lsattr), or choose another location."
        return DocumentError(
            operation, url: url, code: code, reason: "\(what) cannot be written to (\(cause))",
            recoverySuggestion: fix + " " + editsStay(operation), underlyingError: cause)
    }

    /// A writer that returned without leaving anything (or the wrong kind of item) at its
    /// destination.
    static func nothingWritten(_ operation: Operation, url: URL, detail: String) -> DocumentError {
        DocumentError(
            operation, url: url, code: .nothingWritten, reason: "the document's writer \(detail)",
            recoverySuggestion: "This is a bug of the writer: it must write the whole document at the destination it is given. "
                + editsStay(operation))
    }
}
