import Foundation
import PackageCore

extension DocumentError {
    /// Code, reason and suggestion for an error met underneath: the I/O layer's errors by
    /// errno, the save engine's refusals, cancellation, and what readers and writers
    /// commonly throw (`CocoaError`s, `DecodingError`s); anything else is the document's
    /// own failure, quoted.
    static func explain(
        _ error: any Error, operation: Operation, url: URL?, contentType: UTType?
    ) -> (code: Code, reason: String, suggestion: String) {
        let writing = operation.writes
        let ofThisType = contentType.map { "a \($0.identifier) document" } ?? "a document of this type"
        if error is CancellationError {
            return (.cancelled, "it was cancelled", cancelledAdvice(operation))
        }
        if let problem = error as? FileSystemError {
            return explain(problem, operation: operation, url: url)
        }
        if let refusal = error as? SaveRefusal {
            let reason = refusal.description
            switch refusal.reason {
            case .sourceChanged:
                return (.changedWhileSaving, reason, "Save again. " + editsStay(operation))
            case .lockedForReading:
                return (.lockUnavailable, reason, "Wait for the reading to end, then save again. " + editsStay(operation))
            case .sourceNotADirectory, .destinationNotADirectory, .treeNotADirectory, .nested:
                return (.inTheWay, reason, writing ? "Choose another location. " + editsStay(operation) : "")
            case .missingContent, .conflictingOptions, .refusedBySource, .malformedTree:
                return (.documentFailed, reason, writing ? "Try again, or save elsewhere. " + editsStay(operation) : "Try again.")
            }
        }
        if let cocoa = error as? CocoaError {
            return explain(cocoa, operation: operation, ofThisType: ofThisType)
        }
        if let decoding = error as? DecodingError {
            return (
                .damaged, "its content could not be decoded (\(describe(decoding)))",
                "Check that it is \(ofThisType), or restore it from a backup."
            )
        }
        let role = writing ? "writer" : "reader"
        return (
            .documentFailed, "the document's \(role) failed: \(error)",
            writing ? "Try again, or save elsewhere. " + editsStay(operation) : "Try again."
        )
    }

    /// The I/O layer's errors, by errno.
    private static func explain(
        _ problem: FileSystemError, operation: Operation, url: URL?
    ) -> (code: Code, reason: String, suggestion: String) {
        let folder = url.map { (displayPath($0) as NSString).deletingLastPathComponent } ?? "."
        let stays = editsStay(operation)
        if problem.operation == .lock {
            return (
                .lockUnavailable, "its lock could not be taken (\(problem))",
                "Check that the file system supports locks and that the item can be opened. " + stays
            )
        }
        switch problem.errno {
        case .noSpace?, .quotaExceeded?:
            return (
                .diskFull, "the disk is full (\(problem))",
                "Free some space on the disk holding '\(folder)', then try again. " + stays
            )
        case .readOnlyFileSystem?:
            return (
                .readOnlyVolume, "the disk holding it is read-only (\(problem))",
                operation.writes ? "Save it on another disk with save(to:contentType:). " + stays : "Try again."
            )
        case .permissionDenied?, .notPermitted?:
            if operation.writes {
                return (
                    .notWritable, "it cannot be written (\(problem))",
                    "Check the permissions of '\(problem.path)' (and that it is not immutable: lsattr), "
                        + "or save elsewhere. " + stays
                )
            }
            return (.permissionDenied, "permission was denied (\(problem))", "Check the permissions of '\(problem.path)'.")
        case .noSuchFileOrDirectory?, .notDirectory?:
            return (
                .notFound, "something it needs does not exist (\(problem))",
                operation.writes
                    ? "Its folder may have been moved or removed: save it elsewhere. " + stays
                    : "Check the path; the file or a part of it may have been moved or removed."
            )
        default:
            return (
                .ioError, "the system reported an error (\(problem))",
                "Try again; if it persists, check the disk (dmesg). " + stays
            )
        }
    }

    /// What readers and writers commonly throw: Foundation's file errors.
    private static func explain(
        _ cocoa: CocoaError, operation: Operation, ofThisType: String
    ) -> (code: Code, reason: String, suggestion: String) {
        let role = operation.writes ? "writer" : "reader"
        var said = "the document's \(role) reported CocoaError.\(codeName(cocoa.code))"
        if let description = cocoa.userInfo[NSLocalizedDescriptionKey] as? String { said += ": \(description)" }
        if let path = cocoa.userInfo[NSFilePathErrorKey] as? String { said += " ('\(path)')" }
        if let underlying = cocoa.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain
        {
            let errno = Errno(rawValue: Int32(underlying.code))
            said += "; \(errno.message) (\(errno.name))"
        }
        let stays = editsStay(operation)
        switch cocoa.code {
        case .fileReadCorruptFile, .coderReadCorrupt, .coderValueNotFound, .fileReadInapplicableStringEncoding,
            .fileReadUnknownStringEncoding:
            return (
                .damaged, "the file is damaged or not in the format the document reads (\(said))",
                "Check that it is \(ofThisType), or restore it from a backup."
            )
        case .fileReadNoSuchFile, .fileNoSuchFile:
            return (.notFound, "there is no such file (\(said))", "Check the path; the file may have been moved or removed.")
        case .fileReadNoPermission:
            return (.permissionDenied, "permission to read it was denied (\(said))", "Check its permissions.")
        case .fileWriteNoPermission:
            return (.notWritable, "permission to write it was denied (\(said))", "Check the permissions, or save elsewhere. " + stays)
        case .fileWriteOutOfSpace:
            return (.diskFull, "the disk is full (\(said))", "Free some space, then try again. " + stays)
        case .fileWriteVolumeReadOnly:
            return (.readOnlyVolume, "the disk is read-only (\(said))", "Save it on another disk. " + stays)
        case .fileLocking:
            return (.lockUnavailable, "it could not be locked (\(said))", "Try again once the other access is done. " + stays)
        case .userCancelled:
            return (.cancelled, "it was cancelled (\(said))", cancelledAdvice(operation))
        case .fileWriteFileExists:
            return (.inTheWay, "something is already there (\(said))", "Remove it, or choose another name. " + stays)
        case .fileReadTooLarge:
            return (.documentFailed, "the file is too large to read (\(said))", "Open it with a tool that streams it.")
        default:
            return (
                .documentFailed, said,
                operation.writes ? "Try again, or save elsewhere. " + stays : "Try again, or check the file with its author's tools."
            )
        }
    }

    /// Foundation's name for a code, so that a message never shows a bare number.
    static func codeName(_ code: CocoaError.Code) -> String {
        let names: [CocoaError.Code: String] = [
            .fileNoSuchFile: "fileNoSuchFile", .fileLocking: "fileLocking", .fileReadUnknown: "fileReadUnknown",
            .fileReadNoPermission: "fileReadNoPermission", .fileReadInvalidFileName: "fileReadInvalidFileName",
            .fileReadCorruptFile: "fileReadCorruptFile", .fileReadNoSuchFile: "fileReadNoSuchFile",
            .fileReadInapplicableStringEncoding: "fileReadInapplicableStringEncoding",
            .fileReadUnsupportedScheme: "fileReadUnsupportedScheme", .fileReadTooLarge: "fileReadTooLarge",
            .fileReadUnknownStringEncoding: "fileReadUnknownStringEncoding", .fileWriteUnknown: "fileWriteUnknown",
            .fileWriteNoPermission: "fileWriteNoPermission", .fileWriteInvalidFileName: "fileWriteInvalidFileName",
            .fileWriteFileExists: "fileWriteFileExists",
            .fileWriteInapplicableStringEncoding: "fileWriteInapplicableStringEncoding",
            .fileWriteUnsupportedScheme: "fileWriteUnsupportedScheme", .fileWriteOutOfSpace: "fileWriteOutOfSpace",
            .fileWriteVolumeReadOnly: "fileWriteVolumeReadOnly", .userCancelled: "userCancelled",
            .coderReadCorrupt: "coderReadCorrupt", .coderValueNotFound: "coderValueNotFound",
            .coderInvalidValue: "coderInvalidValue", .featureUnsupported: "featureUnsupported",
        ]
        return names[code] ?? "Code(rawValue: \(code.rawValue))"
    }

    private static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .keyNotFound(_, let found),
            .dataCorrupted(let found):
            context = found
        @unknown default:
            return "\(error)"
        }
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    }

    static func cancelledAdvice(_ operation: Operation) -> String {
        switch operation {
        case .open: return "Open it again when you are ready."
        case .revert: return "The document is as it was before the revert."
        case .resolve: return "The conflict stays listed; the package is as it was."
        case .export: return "Nothing was exported; the destination is as it was. Export again when you are ready."
        case .save, .autosave, .saveAs:
            return "The file keeps its last saved version and the edits stay unsaved in the document: save again to write them."
        }
    }

    /// The lossless host's promise, for the suggestion of a failed save (Specs/document.md).
    static func editsStay(_ operation: Operation) -> String {
        switch operation {
        case .save, .autosave, .saveAs:
            return "The file keeps its last saved version; the edits stay in the document and the next save writes them."
        case .export: return "The destination is as it was."
        case .open, .revert: return ""
        case .resolve: return "The conflict stays listed; the package is as it was."
        }
    }
}

extension DocumentError.Operation {
    /// Whether the operation writes (a save, save as, autosave or export).
    var writes: Bool {
        switch self {
        case .open, .revert, .resolve: return false
        case .save, .autosave, .saveAs, .export: return true
        }
    }
}
