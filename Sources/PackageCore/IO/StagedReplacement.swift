import Glibc

/// "Build beside, then swap in": the one way pkgtool publishes anything by rename — a
/// package saved by `full` or `atomic`, the document host's staged destination, an export,
/// a tree extracted by `unpack`, a symbolic link, and every single file replaced whole
/// (`AtomicFile.write` is a thin call into `writeFile`: the manifest, journals, records,
/// `pack`'s archive, the pull cache's files). (`pack --keep-previous` writing over the kept
/// archive's own blocks stages nothing and exchanges the two names itself: PreviousArchive.)
///
/// The new version is staged under a hidden sibling name (`SiblingNames`: short and fixed
/// in length whatever the target's name), on the same file system so that publishing is
/// one rename, made durable as asked, published, and the folder fsynced; every failure
/// before the rename removes the staged sibling. `commit` publishes a named staging entry:
/// `renameat2(RENAME_EXCHANGE)` over an existing target (the old version then sits under
/// the staging name), `RENAME_NOREPLACE` for a new one, and the folder is fsynced. Where
/// the file system cannot exchange, the target is first renamed to an "aside" sibling that
/// recovery puts back should a crash fall between the two renames. `writeFile` stages an
/// unnamed `O_TMPFILE` instead, which a crash cannot leave behind, and names it (`tmp-…`)
/// only for the instant before its rename over the target.
///
/// While it lives, a named staging entry is held under an exclusive `flock`, so that a
/// sweep of leftovers (`sweepLeftovers(beside:)`) run by another process never removes
/// work in progress: it removes only siblings whose owner is gone (a crash), which is how
/// every staged replacement's litter is cleaned by the next command that touches the target.
package final class StagedReplacement {
    /// What is being staged.
    package enum Kind: Sendable, Equatable {
        /// A directory, created with these permission bits (owner-writable while building).
        case directory(permissions: UInt32)
        /// A regular file, created empty with these bits, for the caller to fill.
        case file(permissions: UInt32)
        /// A symbolic link to `target`.
        case symbolicLink(target: String)
    }

    /// The folder holding the target, when this replacement opened it (`writeFile` borrows
    /// its caller's for its own length instead).
    private let openedParent: SharedDescriptor?
    /// The folder holding the target, as the base of every `*at` call.
    private let parent: Int32
    package let parentPath: String
    package let targetName: String
    package let stagingName: String
    /// The staging entry's descriptor, holding the `flock` that marks it live.
    private var liveness: FileDescriptor?
    /// Whether the staging name exists (`writeFile`'s unnamed file has none until it is linked).
    private var named = true
    /// Whether the staged entry is a whole tree to remove (not `writeFile`'s single file).
    private let removesTree: Bool
    /// Whether `commit` swapped the staging entry in.
    package private(set) var committed = false

    /// The staging entry's path.
    package var stagingPath: String { RelativePath.join(parentPath, stagingName) }
    /// The target's path.
    package var targetPath: String { RelativePath.join(parentPath, targetName) }

    /// Creates a fresh staging entry beside `target` (a path; its folder must exist).
    ///
    /// - Complexity: one `openat` of the folder, one `mkdirat` or `openat`, one `flock`.
    package init(replacing target: String, kind: Kind) throws(FileSystemError) {
        let (folder, name) = RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(target))
        parentPath = folder.isEmpty ? "." : folder
        targetName = name
        openedParent = SharedDescriptor(try FileDescriptor.openDirectory(parentPath, followingFinalLink: true))
        parent = openedParent!.rawValue
        removesTree = true
        stagingName = SiblingNames(forName: name).newStaging()
        do {
            switch kind {
            case .directory(let permissions):
                try FileSystem.makeDirectory(stagingName, relativeTo: parent, permissions: permissions | 0o700)
                liveness = try FileDescriptor.openDirectory(stagingName, relativeTo: parent, displayPath: stagingPath)
            case .file(let permissions):
                liveness = try FileDescriptor.open(
                    stagingName, relativeTo: parent, access: .readWrite, options: [.create, .exclusive, .noFollow],
                    permissions: permissions, displayPath: stagingPath)
            case .symbolicLink(let target):
                try FileSystem.makeSymbolicLink(stagingName, target: target, relativeTo: parent)
            }
        } catch {
            // The staging name is pkgtool's: the error names the path the person gave (a
            // read-only folder refuses the new entry beside it).
            throw FileSystemError(
                error.operation, path: RelativePath.join(parentPath, targetName), errno: error.errno,
                reason: error.reason ?? "preparing its replacement beside it")
        }
        liveness?.lockExclusivelyForLife()
    }

    /// Takes over an existing sibling `claimed` (a kept previous version) as the staging
    /// entry: renamed to a fresh staging name first, so that a crash from here on leaves
    /// ordinary staging litter.
    package init(replacing target: String, claiming claimed: String) throws(FileSystemError) {
        let (folder, name) = RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(target))
        parentPath = folder.isEmpty ? "." : folder
        targetName = name
        openedParent = SharedDescriptor(try FileDescriptor.openDirectory(parentPath, followingFinalLink: true))
        parent = openedParent!.rawValue
        removesTree = true
        stagingName = SiblingNames(forName: name).newStaging()
        try FileSystem.rename(claimed, to: stagingName, fromDirectory: parent, toDirectory: parent)
        liveness = try? FileDescriptor.open(stagingName, relativeTo: parent, options: [.noFollow], displayPath: stagingPath)
        liveness?.lockExclusivelyForLife()
    }

    /// `writeFile`'s: the file `name` of a folder its caller holds open for the whole life
    /// of this value (which never leaves `writeFile`).
    private init(newFileNamed name: String, in directory: borrowing FileDescriptor) {
        openedParent = nil
        parent = directory.rawValue
        parentPath = directory.path
        targetName = name
        stagingName = SiblingNames(forName: name).newTemporary()
        named = false
        removesTree = false
    }

    deinit { removeIfAbandoned() }

    /// Removes an abandoned staging entry (an error before `commit`, and `discard` not
    /// called) now rather than leave it to the next sweep.
    private func removeIfAbandoned() {
        guard !committed && named else { return }
        if removesTree {
            try? FileSystem.removeTree(stagingName, relativeTo: parent)
        } else {
            try? FileSystem.remove(stagingName, relativeTo: parent)
        }
        named = false
    }

    /// Writes the file `name` of the open `directory` through `body` and publishes it:
    /// the single-file form of the mechanism, behind `AtomicFile.write`. The new file is an
    /// unnamed `O_TMPFILE` (a hidden `tmp-…` sibling where the file system has none), given
    /// `permissions`, fsynced with `.full`, named `tmp-…` only now, then `beforeReplacing`
    /// runs and the file is renamed over `name` (`rename(2)`: whatever was there is gone)
    /// and the folder fsynced. Any failure before the rename removes the new file.
    ///
    /// - Parameter displayPath: the file being replaced, which errors name.
    /// - Complexity: the writes `body` makes, plus two fsyncs (file and folder) with
    ///   `.full`, a `linkat` and a rename.
    package static func writeFile(
        named name: String, in directory: borrowing FileDescriptor, displayPath: String, permissions: UInt32,
        durability: Durability, beforeReplacing: (borrowing FileDescriptor) throws -> Void,
        _ body: (borrowing FileDescriptor) throws -> Void
    ) throws {
        let staged = StagedReplacement(newFileNamed: name, in: directory)
        let file = try staged.openNewFile(in: directory, permissions: permissions, displayPath: displayPath)
        do {
            try body(file)
            try file.setPermissions(permissions)
            if durability == .full { try file.sync() }
            if !staged.named {
                try FileSystem.linkUnnamed(file, to: staged.stagingName, inDirectory: directory.rawValue)
                staged.named = true
            }
            try file.close()
            try beforeReplacing(directory)
            _ = try staged.publish(durability: durability, replacing: nil, exchange: false, notes: nil)
        } catch {
            // Here, not in `deinit`: the folder is only borrowed.
            staged.removeIfAbandoned()
            throw error
        }
    }

    /// An unnamed file in `directory`, or a new file under the staging name where the file
    /// system has no O_TMPFILE (`named` is then set). Errors name `displayPath`.
    private func openNewFile(
        in directory: borrowing FileDescriptor, permissions: UInt32, displayPath: String
    ) throws(FileSystemError) -> FileDescriptor {
        let failure: FileSystemError
        do {
            return try FileDescriptor.openUnnamed(inDirectory: directory, permissions: permissions, displayPath: displayPath)
        } catch {
            failure = error
        }
        let unsupported: [Errno] = [.notSupported, .isDirectory, .invalidArgument]
        guard let code = failure.errno, unsupported.contains(code) else { throw failure }
        let file = try FileDescriptor.open(
            stagingName, relativeTo: parent, access: .readWrite, options: [.create, .exclusive],
            permissions: permissions, displayPath: displayPath)
        named = true
        return file
    }

    /// Opens the staging directory (for a `.directory` staging).
    package func openStagedDirectory() throws(FileSystemError) -> FileDescriptor {
        try FileDescriptor.openDirectory(stagingName, relativeTo: parent, displayPath: stagingPath)
    }

    /// Swaps the staging entry in: exchanged with the target when it exists (which then sits
    /// under the staging name), renamed without replacing otherwise; the folder fsynced with
    /// `.full` durability. If that fsync fails the swap is undone, so an error always leaves
    /// the target as it was. Returns whether a target was replaced.
    ///
    /// - Parameter exchange: false for a file replaced by `rename(2)` over it (the old file
    ///   is then gone, not kept under the staging name).
    /// - Complexity: one or two renames, one fsync of the folder.
    @discardableResult
    package func commit(durability: Durability, exchange: Bool = true, notes: ((String) -> Void)? = nil) throws -> Bool {
        let existed = try FileSystem.statusIfExists(targetName, relativeTo: parent) != nil
        return try publish(durability: durability, replacing: existed, exchange: exchange, notes: notes)
    }

    /// Publishes `entry`, a file the writer made inside the staged directory, in the
    /// target's place instead of the staging entry itself (a document writer free to make a
    /// file or a folder made a file): renamed over the target, the folder fsynced with
    /// `.full`. The staging directory stays, for `discard`.
    ///
    /// - Complexity: one rename, one fsync of the folder.
    package func commit(entry: String, durability: Durability) throws(FileSystemError) {
        let source = RelativePath.join(stagingName, entry)
        do {
            _ = try publish(source, durability: durability, replacing: nil, exchange: false, notes: nil)
        } catch where error.operation == .rename {
            // Named as the person knows them, not relative to the folder.
            throw FileSystemError(
                .rename, path: RelativePath.join(parentPath, source), destination: targetPath, errno: error.errno)
        }
    }

    /// The publishing step, the one rename that makes `source` (the staging entry unless
    /// said) the target, then the folder's fsync with `.full`. `existed`: whether the target
    /// was there, or nil when not looked at (`rename(2)` over whatever is there, and a
    /// failed fsync leaves the new version published, with no old one to put back).
    /// Otherwise a failed fsync undoes the swap, so the error leaves the previous version
    /// in place.
    private func publish(
        _ source: String? = nil, durability: Durability, replacing existed: Bool?, exchange: Bool,
        notes: ((String) -> Void)?
    ) throws(FileSystemError) -> Bool {
        switch existed {
        case true? where exchange:
            try swapIn(durability: durability, notes: notes)
        case false?:
            try FileSystem.renameNoReplace(stagingName, to: targetName, fromDirectory: parent, toDirectory: parent)
        default:
            try FileSystem.rename(source ?? stagingName, to: targetName, fromDirectory: parent, toDirectory: parent)
        }
        // Something inside the staging entry moved out: the entry itself is still to discard.
        guard source == nil else {
            if durability == .full { try syncParent() }
            return false
        }
        committed = true
        do {
            if durability == .full { try syncParent() }
        } catch {
            // The swap may not be durable: undo it, so that the error leaves the previous
            // version in place, as every other failure does.
            if existed == true && exchange {
                try? FileSystem.exchange(stagingName, with: targetName, firstDirectory: parent, secondDirectory: parent)
                committed = false
            } else if existed == false {
                try? FileSystem.rename(targetName, to: stagingName, fromDirectory: parent, toDirectory: parent)
                committed = false
            }
            throw error
        }
        liveness = nil
        return existed == true && exchange
    }

    /// fsyncs the target's folder; errors name it as it was opened.
    private func syncParent() throws(FileSystemError) {
        do { try Syscall.fsync(parent, path: parentPath) } catch {
            throw FileSystemError(.sync, path: parentPath, errno: error)
        }
    }

    /// Exchanges staging and target; where the file system cannot (EINVAL, EOPNOTSUPP),
    /// moves the target aside and the staging entry in, which recovery undoes if a crash
    /// falls between the two renames.
    private func swapIn(durability: Durability, notes: ((String) -> Void)?) throws(FileSystemError) {
        do {
            try FileSystem.exchange(stagingName, with: targetName, firstDirectory: parent, secondDirectory: parent)
            return
        } catch {
            guard error.errno == .invalidArgument || error.errno == .notSupported else { throw error }
        }
        let asideName = SiblingNames(forName: targetName).newAside()
        try FileSystem.rename(targetName, to: asideName, fromDirectory: parent, toDirectory: parent)
        if durability == .full { try syncParent() }
        try FileSystem.rename(stagingName, to: targetName, fromDirectory: parent, toDirectory: parent)
        if durability == .full { try syncParent() }
        try FileSystem.rename(asideName, to: stagingName, fromDirectory: parent, toDirectory: parent)
        notes?("renameat2(RENAME_EXCHANGE) is not supported here: swapped in with two renames")
    }

    /// Removes what sits under the staging name — the partial new version before `commit`,
    /// the replaced old one after — on `workers` threads. Marks the replacement finished.
    package func discard(workers: Int = 1) throws(FileSystemError) {
        liveness = nil
        let wasCommitted = committed
        committed = true
        do {
            if workers > 1 {
                try FileSystem.removeTree(stagingName, relativeTo: parent, workers: workers)
            } else {
                try FileSystem.removeTree(stagingName, relativeTo: parent)
            }
        } catch {
            committed = wasCommitted
            throw error
        }
    }

    /// After `commit`, renames the replaced version (under the staging name) to `name`.
    package func keepReplaced(as name: String) throws(FileSystemError) {
        try FileSystem.rename(stagingName, to: name, fromDirectory: parent, toDirectory: parent)
    }

    /// Removes the leftovers of staged replacements of `target` whose owners are gone:
    /// staging entries no live process holds, and — when `target` exists — versions set
    /// aside; when `target` is missing, the newest set-aside version is put back first.
    /// Reports what it did through `removed`.
    ///
    /// - Returns: the number of leftovers removed or restored.
    /// - Complexity: one listing of the target's folder, one `flock` probe per candidate.
    @discardableResult
    package static func sweepLeftovers(
        beside target: String, durability: Durability = .full
    ) throws(FileSystemError) -> Int {
        let (folder, name) = RelativePath.splitLast(RelativePath.trimmingTrailingSlashes(target))
        let parent = try FileDescriptor.openDirectory(folder.isEmpty ? "." : folder, followingFinalLink: true)
        let siblings = SiblingNames(forName: name)
        var staging: [String] = []
        var asides: [String] = []
        // Only pkgtool's own (ASCII-suffixed) names matter here: a neighbour's non-UTF-8
        // name is skipped, not a reason to give up the sweep.
        for entry in try DirectoryListing.names(in: parent, skippingNonUTF8Names: true) {
            switch siblings.role(of: entry) {
            case .staging?: staging.append(entry)
            case .aside?: asides.append(entry)
            case nil: break
            }
        }
        var count = 0
        if !asides.isEmpty, try FileSystem.statusIfExists(name, relativeTo: parent.rawValue) == nil {
            // A crash between the two renames of the no-exchange swap: put the old version back.
            let restored = asides.sorted().last!
            try FileSystem.rename(restored, to: name, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
            if durability == .full { try parent.sync() }
            asides.removeAll { $0 == restored }
            count += 1
        }
        for leftover in staging + asides where !isLive(leftover, in: parent) {
            try FileSystem.removeTree(leftover, relativeTo: parent.rawValue, displayPath: RelativePath.join(folder, leftover))
            count += 1
        }
        return count
    }

    /// Whether a live staged replacement holds `name`'s lock.
    private static func isLive(_ name: String, in parent: borrowing FileDescriptor) -> Bool {
        guard let probe = try? FileDescriptor.open(name, relativeTo: parent.rawValue, options: [.noFollow, .nonBlocking])
        else { return false }
        return !probe.tryLockExclusively()
    }
}

extension FileDescriptor {
    /// Takes an exclusive `flock` held until this descriptor closes (best effort: a file
    /// system without `flock` only loses the liveness mark).
    package func lockExclusivelyForLife() {
        _ = try? Syscall.flock(rawValue, LOCK_EX | LOCK_NB, path: path)
    }

    /// Whether an exclusive `flock` could be taken now (and is then held until close).
    package func tryLockExclusively() -> Bool {
        do {
            try Syscall.flock(rawValue, LOCK_EX | LOCK_NB, path: path)
            return true
        } catch {
            return error != .wouldBlock
        }
    }
}

/// Notes gathered by a callback (`StagedReplacement.commit`'s).
package final class NoteList {
    package private(set) var items: [String] = []
    package init() {}
    package func append(_ note: String) { items.append(note) }
}
