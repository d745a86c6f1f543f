import Foundation
import PackageCore

/// A document operation that failed: what was asked, what was wrong, and what to do.
///
/// The one error type the document layer throws. Its description is the sentence a person
/// reads, in three parts:
///
///     cannot save '/home/ann/Trip.notebook': the disk is full (cannot write '…/.pkgtool/tmp/…':
///     No space left on device (ENOSPC from write)). Free some space on the disk holding
///     '/home/ann', then save again; until then the edits stay unsaved in the document.
///
/// `code` is for programs (switch on it); `reason` and `recoverySuggestion` are the parts of
/// the sentence; `underlyingError` keeps the cause (a `FileSystemError`, a reader's or
/// writer's own error, `CancellationError`) when there is one.
public struct DocumentError: Error, CustomStringConvertible {
    /// The operation that was asked for.
    public enum Operation: String, Sendable {
        /// Opening a file (`DocumentSession.open`).
        case open
        /// Rereading the document's file (`revert()`).
        case revert
        /// Saving to the document's file (`save()`).
        case save
        /// An autosave, which nobody awaits: it lands in `lastError`.
        case autosave
        /// Saving to a new location or type (`save(to:contentType:)`).
        case saveAs = "save as"
        /// Writing a copy (`export(to:contentType:)`).
        case export
        /// Settling a conflict version of the document's package (`resolveConflict(at:keep:host:)`).
        case resolve
    }

    /// What went wrong, for a program to act on. Extensible: compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as the static member is spelled ("diskFull").
        public let name: String
        init(_ name: String) { self.name = name }
        /// The name.
        public var description: String { name }

        /// The document has no file yet (a new document asked to `save()`).
        public static let noFileYet = Code("noFileYet")
        /// The document does not read or write the content type asked for.
        public static let unsupportedContentType = Code("unsupportedContentType")
        /// A ZIP export of a document none of whose types is a package type.
        public static let notAPackageType = Code("notAPackageType")
        /// The folder that should hold the file does not exist (or is not a folder).
        public static let folderMissing = Code("folderMissing")
        /// The file, package or folder cannot be written: permissions, an immutable flag.
        public static let notWritable = Code("notWritable")
        /// The disk holding it is mounted read-only.
        public static let readOnlyVolume = Code("readOnlyVolume")
        /// Permission to read was denied.
        public static let permissionDenied = Code("permissionDenied")
        /// The disk (or the quota) is full.
        public static let diskFull = Code("diskFull")
        /// The file or a part of it does not exist (any more).
        public static let notFound = Code("notFound")
        /// The lock that keeps two writers apart could not be taken.
        public static let lockUnavailable = Code("lockUnavailable")
        /// The operation was cancelled.
        public static let cancelled = Code("cancelled")
        /// The file is damaged or not in the format the document reads.
        public static let damaged = Code("damaged")
        /// Something the operation needs is in the way (a file where a package should be).
        public static let inTheWay = Code("inTheWay")
        /// A file the save was copying changed while it was read: nothing was changed,
        /// and saving again will likely succeed.
        public static let changedWhileSaving = Code("changedWhileSaving")
        /// The writer returned without writing anything.
        public static let nothingWritten = Code("nothingWritten")
        /// The document's own reader or writer failed with an error of its own.
        public static let documentFailed = Code("documentFailed")
        /// Input/output trouble the kernel reported (EIO and the like).
        public static let ioError = Code("ioError")
    }

    /// What was asked for.
    public var operation: Operation
    /// The file the operation was about, when there is one.
    public var url: URL?
    /// The content type asked for, when it matters to the message (save as, export).
    public var contentType: UTType?
    /// What went wrong, for a program to switch on.
    public var code: Code
    /// What was wrong, as a clause: "the disk is full (…)".
    public var reason: String
    /// What to do about it, as a sentence.
    public var recoverySuggestion: String
    /// What went wrong underneath, when something did: a `FileSystemError`, a `CocoaError`
    /// or other error of the document's reader or writer, `CancellationError`.
    public var underlyingError: (any Error)?

    /// An error with every part given: for readers and writers that explain their own
    /// failures in the host's terms.
    public init(
        _ operation: Operation, url: URL?, contentType: UTType? = nil, code: Code, reason: String,
        recoverySuggestion: String, underlyingError: (any Error)? = nil
    ) {
        self.operation = operation
        self.url = url
        self.contentType = contentType
        self.code = code
        self.reason = reason
        self.recoverySuggestion = recoverySuggestion
        self.underlyingError = underlyingError
    }

    /// The error for `underlyingError` met while doing `operation` on `url`: its code, reason
    /// and suggestion worked out from the cause (Specs/document.md, "Errors").
    public init(_ operation: Operation, url: URL?, contentType: UTType? = nil, underlyingError: any Error) {
        if let documentError = underlyingError as? DocumentError {
            self = documentError
            return
        }
        let explained = DocumentError.explain(underlyingError, operation: operation, url: url, contentType: contentType)
        self.init(
            operation, url: url, contentType: contentType, code: explained.code, reason: explained.reason,
            recoverySuggestion: explained.suggestion.trimmingCharacters(in: .whitespaces),
            underlyingError: underlyingError)
    }

    /// Whether the operation stopped because it was cancelled.
    public var isCancellation: Bool { code == .cancelled }

    /// "cannot save '/x/a.txt'", "cannot export '/x/a.zip' as public.zip-archive".
    public var whatWasAsked: String {
        let verb: String
        switch operation {
        case .open: verb = "open"
        case .revert: verb = "revert"
        case .resolve: verb = "resolve a conflict of"
        case .save, .autosave, .saveAs: verb = "save"
        case .export: verb = "export"
        }
        var text = "cannot \(verb)"
        if let url {
            text += " '\(DocumentError.displayPath(url))'"
        } else {
            text += " the document"
        }
        if let contentType, operation == .export || operation == .saveAs { text += " as \(contentType.identifier)" }
        if operation == .autosave { text += " (autosave)" }
        return text
    }

    /// The sentence a person reads: what was asked, what was wrong, what to do.
    public var description: String {
        whatWasAsked + ": " + reason + ". " + recoverySuggestion
    }

    static func displayPath(_ url: URL) -> String {
        RelativePath.trimmingTrailingSlashes(url.isFileURL ? url.path(percentEncoded: false) : url.absoluteString)
    }
}

extension DocumentError: LocalizedError {
    /// The whole sentence (`description`), for code that shows `localizedDescription`.
    public var errorDescription: String? { description }
    /// What was wrong (`reason`).
    public var failureReason: String? { reason }
}
