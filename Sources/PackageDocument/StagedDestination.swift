import Foundation
import PackageCore

/// Where a writer that does not write atomically by itself writes: a hidden place beside
/// the target, made by `StagedReplacement` (PackageCore's one "build beside, then swap in"),
/// so that a failed or cancelled write leaves the target as it was and nothing behind.
///
/// - A **flat** type gets a staged file (created empty): the writer fills or replaces it;
///   `commit` fsyncs it and renames it over the target.
/// - A **package** type gets a staged folder, and the writer's destination is
///   `FOLDER/content/NAME`, where nothing exists yet: the writer creates the package there
///   (any way it likes, `FileWrapper.write` included). `commit` then saves that tree into
///   the target through the save engine (`StagedDirectorySource`): the target gets the
///   engine's lock, recovery, crash guarantee and manifest; files that differ are moved
///   into it from the staging folder (not written twice), the others stay as they are.
///   The staged folder is then removed.
/// - A type whose kind the host does not know yet (`.either`: a new document of a type that
///   does not declare its kind, written by a `FileWrapperDocumentWriter`) gets the same
///   staged folder; `commit` then goes by what the writer made: a folder is saved through
///   the engine as above, a file is fsynced and renamed over the target.
///
/// The staged entry is held under `StagedReplacement`'s liveness lock while it lives, so a
/// sweep run meanwhile by another process leaves it alone, and one run after a crash
/// removes it. The package sits one folder below the staged folder because the engine,
/// saving to a path that does not exist yet, locks the folder that will hold it — which
/// must not be the staged folder, whose liveness lock this process already holds.
final class StagedDestination {
    enum Shape { case file, package, either }

    let shape: Shape
    let targetPath: String
    private let staged: StagedReplacement
    /// Where the writer writes.
    let destinationPath: String
    /// What `commit` merged from another writer; nil when nobody else had saved.
    private(set) var merge: OtherWriterMerge?

    /// Stages beside `target` (whose folder must exist).
    ///
    /// - Parameter permissions: of the staged file (a flat type): the target's, when it
    ///   exists, so that a save does not change them.
    /// - Complexity: a `mkdirat` or `openat`, a `flock`; for a package one more `mkdirat`.
    init(for target: PackageLocation, shape: Shape, permissions: UInt32 = 0o644) throws {
        self.shape = shape
        targetPath = target.path
        switch shape {
        case .file:
            staged = try StagedReplacement(replacing: target.path, kind: .file(permissions: permissions))
            destinationPath = staged.stagingPath
        case .package, .either:
            staged = try StagedReplacement(replacing: target.path, kind: .directory(permissions: 0o700))
            let content = RelativePath.join(staged.stagingPath, "content")
            try FileSystem.makeDirectory(content)
            destinationPath = RelativePath.join(content, target.name)
        }
    }

    var url: URL { URL(fileURLWithPath: destinationPath) }

    /// What the writer left: nil when it left nothing, else whether it is a directory.
    func writtenKind() throws -> FileKind? {
        try FileSystem.statusIfExists(destinationPath)?.kind
    }

    /// Swaps a staged file in (fsynced first with `.full`), or saves a staged package into
    /// the target through the engine; then removes what is left of the staged entry.
    /// Returns the engine's outcome for a package.
    ///
    /// - Complexity: a file: one fsync and one rename (and the folder's fsync). A package:
    ///   the engine's save of a scanned directory — every staged file hashed once, the
    ///   differing ones moved into the target — then what is left of the staged tree removed.
    ///
    /// - Parameter mergeBase: for a save in place, the package's tree as the document read or
    ///   last saved it: when another writer saved meanwhile, the staged tree is merged with
    ///   the package (`OtherWriterMerge`) instead of replacing it, and `merge` says how.
    func commit(
        durability: Durability, cancellation: SaveCancellation?, progress: consuming Subprogress? = nil,
        mergeBase: TreeSnapshot? = nil
    ) throws -> SaveOutcome? {
        switch shape {
        case .file:
            if durability == .full {
                let file = try FileDescriptor.open(destinationPath, options: [.noFollow])
                try file.sync()
            }
            if let cancellation, cancellation.isCancelled { throw CancellationError() }
            try staged.commit(durability: durability, exchange: false)
            return nil
        case .either where try writtenKind() != .directory:
            // A file made where the kind was the writer's to choose: renamed over the target.
            if durability == .full {
                let file = try FileDescriptor.open(destinationPath, options: [.noFollow])
                try file.sync()
            }
            if let cancellation, cancellation.isCancelled { throw CancellationError() }
            try staged.commit(entry: "content/" + RelativePath.lastComponent(of: destinationPath), durability: durability)
            discard()
            return nil
        case .package, .either:
            var options = SaveOptions(durability: durability, cancellation: cancellation)
            if let mergeBase, let other = try OtherWriterMerge.changedPackage(at: targetPath, since: mergeBase) {
                let local = try PackageScan.scan(destinationPath, useManifest: false).snapshot
                let merged = TreeMerge(base: mergeBase, local: local, other: other)
                var result = OtherWriterMerge()
                try result.keepConflicts(of: merged, packagePath: targetPath, durability: durability)
                options.conflictsRecord = result.conflictsRecord
                let source = try MergedStagedSource(merged: merged, stagedPath: destinationPath, packagePath: targetPath)
                var outcome = try PackageSaver.save(source, to: targetPath, options: options, progress: progress.take())
                outcome.statistics.notes += result.notes
                merge = result
                discard()
                return outcome
            }
            let outcome = try PackageSaver.save(
                StagedDirectorySource(destinationPath), to: targetPath, options: options, progress: progress.take())
            discard()
            return outcome
        }
    }

    /// Removes the staged entry and everything the writer put in it.
    func discard() {
        try? staged.discard()
    }
}
