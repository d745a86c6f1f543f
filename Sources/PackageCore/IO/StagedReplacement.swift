import Glibc

/// "Build beside, then swap in": the one way pkgtool replaces a whole directory or a named
/// file — a package saved by `full` or `atomic`, the document host's staged destination,
/// an export, a tree extracted by `unpack`. (A single file replaced whole, such as the
/// manifest or `pack`'s archive, goes through `AtomicFile`'s unnamed `O_TMPFILE` instead,
/// which a crash cannot leave behind.)
///
/// The new version is built under a hidden sibling name (`SiblingNames`: short and fixed
/// in length whatever the target's name), on the same file system so that the swap is one
/// rename. `commit` swaps it in: `renameat2(RENAME_EXCHANGE)` over an existing target (the
/// old version then sits under the staging name), `RENAME_NOREPLACE` for a new one, and
/// the folder is fsynced. Where the file system cannot exchange, the target is first
/// renamed to an "aside" sibling that recovery puts back should a crash fall between the
/// two renames.
///
/// While it lives, the staging entry is held under an exclusive `flock`, so that a sweep
/// of leftovers (`sweepLeftovers(beside:)`) run by another process never removes work in
/// progress: it removes only siblings whose owner is gone (a crash), which is how every
/// staged replacement's litter is cleaned by the next command that touches the target.
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

    /// The folder holding the target, open.
    package let parent: SharedDescriptor
    package let parentPath: String
    package let targetName: String
    package let stagingName: String
    /// The staging entry's descriptor, holding the `flock` that marks it live.
    private var liveness: FileDescriptor?
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
        parent = SharedDescriptor(try FileDescriptor.openDirectory(parentPath, followingFinalLink: true))
        stagingName = SiblingNames(forName: name).newStaging()
        do {
            switch kind {
            case .directory(let permissions):
                try FileSystem.makeDirectory(stagingName, relativeTo: parent.rawValue, permissions: permissions | 0o700)
                liveness = try FileDescriptor.openDirectory(stagingName, relativeTo: parent.rawValue, displayPath: stagingPath)
            case .file(let permissions):
                liveness = try FileDescriptor.open(
                    stagingName, relativeTo: parent.rawValue, access: .readWrite, options: [.create, .exclusive, .noFollow],
                    permissions: permissions, displayPath: stagingPath)
            case .symbolicLink(let target):
                try FileSystem.makeSymbolicLink(stagingName, target: target, relativeTo: parent.rawValue)
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
        parent = SharedDescriptor(try FileDescriptor.openDirectory(parentPath, followingFinalLink: true))
        stagingName = SiblingNames(forName: name).newStaging()
        try FileSystem.rename(claimed, to: stagingName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        liveness = try? FileDescriptor.open(
            stagingName, relativeTo: parent.rawValue, options: [.noFollow], displayPath: stagingPath)
        liveness?.lockExclusivelyForLife()
    }

    deinit {
        // An abandoned staging entry (an error before `commit`, and `discard` not called):
        // remove it now rather than leave it to the next sweep.
        if !committed { try? FileSystem.removeTree(stagingName, relativeTo: parent.rawValue) }
    }

    /// Opens the staging directory (for a `.directory` staging).
    package func openStagedDirectory() throws(FileSystemError) -> FileDescriptor {
        try FileDescriptor.openDirectory(stagingName, relativeTo: parent.rawValue, displayPath: stagingPath)
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
        let existed = try FileSystem.statusIfExists(targetName, relativeTo: parent.rawValue) != nil
        if existed && !exchange {
            try FileSystem.rename(stagingName, to: targetName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        } else if existed {
            try swapIn(durability: durability, notes: notes)
        } else {
            try FileSystem.renameNoReplace(stagingName, to: targetName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        }
        committed = true
        do {
            if durability == .full { try parent.descriptor.sync() }
        } catch {
            // The swap may not be durable: undo it, so that the error leaves the previous
            // version in place, as every other failure does.
            if existed && exchange {
                try? FileSystem.exchange(stagingName, with: targetName, firstDirectory: parent.rawValue, secondDirectory: parent.rawValue)
                committed = false
            } else if !existed {
                try? FileSystem.rename(targetName, to: stagingName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
                committed = false
            }
            throw error
        }
        liveness = nil
        return existed && exchange
    }

    /// Exchanges staging and target; where the file system cannot (EINVAL, EOPNOTSUPP),
    /// moves the target aside and the staging entry in, which recovery undoes if a crash
    /// falls between the two renames.
    private func swapIn(durability: Durability, notes: ((String) -> Void)?) throws(FileSystemError) {
        do {
            try FileSystem.exchange(stagingName, with: targetName, firstDirectory: parent.rawValue, secondDirectory: parent.rawValue)
            return
        } catch {
            guard error.errno == .invalidArgument || error.errno == .notSupported else { throw error }
        }
        let asideName = SiblingNames(forName: targetName).newAside()
        try FileSystem.rename(targetName, to: asideName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        if durability == .full { try parent.descriptor.sync() }
        try FileSystem.rename(stagingName, to: targetName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
        if durability == .full { try parent.descriptor.sync() }
        try FileSystem.rename(asideName, to: stagingName, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
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
                try FileSystem.removeTree(stagingName, relativeTo: parent.rawValue, workers: workers)
            } else {
                try FileSystem.removeTree(stagingName, relativeTo: parent.rawValue)
            }
        } catch {
            committed = wasCommitted
            throw error
        }
    }

    /// After `commit`, renames the replaced version (under the staging name) to `name`.
    package func keepReplaced(as name: String) throws(FileSystemError) {
        try FileSystem.rename(stagingName, to: name, fromDirectory: parent.rawValue, toDirectory: parent.rawValue)
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
