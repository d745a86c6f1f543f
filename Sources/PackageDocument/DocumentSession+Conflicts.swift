import Foundation
import PackageCore

extension DocumentSession {
    /// The conflict versions the document's package keeps, in path order: for each file
    /// another writer changed too while the document had it open, the version the package
    /// did not keep (Specs/document.md, "Other writers"). They stay listed — and nothing
    /// blocks — until resolved with `resolveConflict(at:keep:)` (or `pkgtool resolve`).
    /// Empty for a flat file or a document with no file yet.
    ///
    /// - Throws: `DocumentError` (operation `.open`) when the package's conflicts record
    ///   cannot be read.
    /// - Complexity: one read of `.pkgtool/conflicts/list`.
    public var conflicts: [ConflictVersion] {
        get throws {
            guard let url = configuration.fileURL, formOnDisk == .package else { return [] }
            do {
                return try ConflictResolver.conflicts(of: FileCoordinator.path(of: url))
            } catch {
                throw record(
                    DocumentError(
                        .open, url: url, code: .damaged,
                        reason: "its conflict versions cannot be read (\(error))",
                        recoverySuggestion: "Check '.pkgtool/conflicts/list' inside it (pkgtool conflicts).",
                        underlyingError: error))
            }
        }
    }

    /// Settles the conflict versions at `path` (and beneath it) in the document's package,
    /// through PackageCore's `ConflictResolver` under the document's exclusive lock: one
    /// ordinary save, its record in the commit. When the package's tree changes (`.other`,
    /// `.both`), the document is read again, so it shows what its file now holds.
    ///
    /// - Parameters:
    ///   - path: the conflicting path, as `conflicts` lists it.
    ///   - keep: `.local` keeps the document's version, `.other` the other writer's, `.both`
    ///     writes the other writer's beside it under a conflict-copy name.
    ///   - host: the host name a `.both` copy's name carries.
    /// - Returns: the paths written into the package (the copy's for `.both`).
    /// - Throws: `DocumentError` (operation `.resolve`): `noFileYet`; `inTheWay` when keeping
    ///   another version would discard unsaved changes (save first); the resolver's refusal
    ///   (no conflict listed there); a failed reread.
    /// - Complexity: a scan of the package and a save writing the restored entries, then —
    ///   when the tree changed — a read of the document.
    @discardableResult
    public func resolveConflict(
        at path: RelativePath, keep: ConflictKeep, host: String = ProcessInfo.processInfo.hostName
    ) async throws -> [RelativePath] {
        guard let url = configuration.fileURL else { throw record(DocumentError.noFileYet(.resolve)) }
        do {
            try await waitForRunningSave()
            if keep != .local && hasUnsavedChanges {
                throw DocumentError(
                    .resolve, url: url, code: .inTheWay,
                    reason: "keeping another version of '\(path.string)' rereads the document, which has unsaved changes",
                    recoverySuggestion: "Save it first, then resolve the conflict.")
            }
            let durability = durability
            let seconds = Date().timeIntervalSince1970
            let day = CalendarDay(secondsSince1970: Int64(seconds), offsetSeconds: Int64(TimeZone.current.secondsFromGMT()))
            let outcome = try await FileCoordinator(documentURL: url).withLock(on: url, exclusive: true, handingOver: ()) { _ in
                try await withTaskExecutorPreference(DocumentIOExecutor.shared) {
                    let packagePath = try FileCoordinator.path(of: url)
                    let options = SaveOptions(durability: durability)
                    let written = try ConflictResolver.resolve(
                        packagePath, path: path, keep: keep, day: day, host: host, options: options
                    ).written
                    return (written, DocumentSession.recordedTree(at: url))
                }
            }
            if outcome.0.isEmpty {
                baseTree = outcome.1
            } else {
                try await readAndApply(from: url, contentType: contentType)
            }
            return outcome.0
        } catch {
            throw record(DocumentError(.resolve, url: url, underlyingError: error))
        }
    }
}
