import Foundation

/// A document operation that failed: which, on which file, and why.
///
/// The description is the sentence a person reads, for example
/// `cannot open 'Trip.notebook': the file is damaged or not in the expected format
/// (CocoaError.fileReadCorruptFile)`. The cause stays available as `underlyingError`.
public struct DocumentError: Error, CustomStringConvertible {
    public enum Operation: String, Sendable {
        case open, revert, save, autosave
        case saveAs = "save as"
        case export
    }

    public var operation: Operation
    /// The file the operation was about, when there is one.
    public var url: URL?
    /// What went wrong underneath (a `FileSystemError`, a `CocoaError`, a reader's or
    /// writer's own error, `CancellationError`).
    public var underlyingError: any Error

    public init(_ operation: Operation, url: URL?, underlyingError: any Error) {
        self.operation = operation
        self.url = url
        self.underlyingError = underlyingError
    }

    /// Whether the operation stopped because it was cancelled.
    public var isCancellation: Bool { underlyingError is CancellationError }

    public var description: String {
        let verb: String
        switch operation {
        case .open: verb = "open"
        case .revert: verb = "revert"
        case .save, .autosave: verb = "save"
        case .saveAs: verb = "save"
        case .export: verb = "export"
        }
        var text = "cannot \(verb)"
        if let url {
            var path = url.path(percentEncoded: false)
            while path.utf8.count > 1 && path.hasSuffix("/") { path.removeLast() }
            text += " '\(path)'"
        } else {
            text += " the document"
        }
        if operation == .autosave { text += " (autosave)" }
        return text + ": " + DocumentError.explain(underlyingError)
    }

    /// A readable cause for the errors documents commonly throw.
    static func explain(_ error: any Error) -> String {
        if error is CancellationError { return "the operation was cancelled" }
        if let cocoa = error as? CocoaError {
            let phrase: String
            switch cocoa.code {
            case .fileReadCorruptFile: phrase = "the file is damaged or not in the expected format"
            case .fileReadNoSuchFile, .fileNoSuchFile: phrase = "there is no such file"
            case .fileReadNoPermission: phrase = "permission to read it was denied"
            case .fileWriteNoPermission: phrase = "permission to write it was denied"
            case .fileWriteOutOfSpace: phrase = "the disk is full"
            case .fileReadUnknown, .fileWriteUnknown: phrase = "an unknown error occurred"
            case .fileLocking: phrase = cocoa.userInfo[NSLocalizedDescriptionKey] as? String ?? "the file could not be locked"
            case .userCancelled: phrase = "the operation was cancelled"
            default: phrase = "Cocoa error \(cocoa.code.rawValue)"
            }
            return phrase + " (CocoaError \(cocoa.code.rawValue)\(codeName(cocoa.code)))"
        }
        return "\(error)"
    }

    private static func codeName(_ code: CocoaError.Code) -> String {
        switch code {
        case .fileReadCorruptFile: return " fileReadCorruptFile"
        case .fileReadNoSuchFile: return " fileReadNoSuchFile"
        case .fileNoSuchFile: return " fileNoSuchFile"
        case .fileReadNoPermission: return " fileReadNoPermission"
        case .fileWriteNoPermission: return " fileWriteNoPermission"
        case .fileWriteOutOfSpace: return " fileWriteOutOfSpace"
        case .fileLocking: return " fileLocking"
        default: return ""
        }
    }
}
