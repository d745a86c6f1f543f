import Dispatch

/// The one way into a package for whoever reads or changes it: the engine takes its lock,
/// recovers an interrupted save and hands the body an `OpenPackage`. Saves, readers, the
/// document layer's coordinator, pulls and `pkgtool manifest` all come through here, so
/// lock-and-recover is written once (Specs/save.md, Coordination).
///
/// - A **shared** scope is a reader's: an interrupted save is recovered first, under the
///   exclusive lock, when recovery finds a journal it validated (never one it refused) or
///   leftovers; should that fail (a folder in the way, a full disk), `warn` hears why on one
///   line, the problem is kept in `OpenPackage.problem`, and the package is read as it
///   stands — a reader never fails because an earlier save cannot be finished. The shared
///   lock is then held during the body when the package exists; a directory that never saw
///   a save is not changed by reading it, and an absent package is not locked at all.
/// - An **exclusive** scope is a writer's: the exclusive lock (on the package's folder when
///   the package does not exist yet, so that creating it is serialised too), then recovery,
///   which must succeed: its failure is thrown.
///
/// Scopes nest within a task: code already inside a scope for the same package does not
/// wait for itself (a document host coordinates a save whose writer calls
/// `FileWrapper.write`, which runs the save engine). An exclusive scope covers a nested
/// shared or exclusive one (a nested exclusive scope recovers again, cheaply); a shared one
/// covers a nested shared one and refuses a nested exclusive one with
/// `SaveRefusal.Reason.lockedForReading` (upgrading would wait for itself forever).
///
/// Which package a nested scope names is decided by the **identity of the item the lock
/// is on** (device and inode, as `PackageLock` knows it), not by its path: a `flock` belongs
/// to an open file of an inode, so "would this task wait for itself" is exactly "does this
/// task hold a lock on that inode". Two names that only look alike (`é` and `e\u{301}`) are
/// two directories, hence two scopes, with no comparison of names at all; one directory
/// reached by two paths (a bind mount) is one. Handing the open package down instead would
/// not reach the engine a document's writer starts through `FileWrapper.write(to:)`, which
/// knows only a URL; so the held locks are recorded task-locally (child tasks inherit them).
public enum PackageScope {
    /// How a scope holds its package.
    public enum Access: Sendable, Equatable {
        /// Readers: many at a time, none while a save runs.
        case shared
        /// Writers (saves, recovery, the manifest, a document's coordinated write): one at a time.
        case exclusive
    }

    /// Runs `body` with the package at `packagePath` open for `access`: locked, recovered,
    /// consistent for as long as `body` runs.
    ///
    /// - Parameters:
    ///   - packagePath: the package (any spelling: relative, through a symlinked folder; for
    ///     a document, a flat file too). It need not exist; its folder must.
    ///   - access: `.shared` to read, `.exclusive` to change the package.
    ///   - warn: hears each warning, one line each: what recovery set aside or left, and for
    ///     a shared scope why an earlier save stays unfinished.
    ///   - body: works on the package; its result is returned.
    /// - Returns: what `body` returns.
    /// - Throws: `FileSystemError` when the path cannot be resolved, or — for an exclusive
    ///   scope — the lock cannot be taken or recovery cannot finish; `SaveRefusal` with
    ///   `.lockedForReading` when an exclusive scope is asked for inside a shared one of the
    ///   same package; whatever `body` throws.
    /// - Complexity: a `stat`, an `open` and a `flock` (a wait while another holds the lock);
    ///   recovery's work only when an earlier save was interrupted.
    public static func withPackage<R>(
        at packagePath: String, access: Access, warn: (String) -> Void = { _ in }, _ body: (OpenPackage) throws -> R
    ) throws -> R {
        try withPackage(at: try PackageLocation(packagePath), access: access, warn: warn, body)
    }

    /// `withPackage(at:access:warn:_:)` for async work. The lock is waited for (and an
    /// interrupted save recovered) on a Dispatch thread, never on one of Swift's cooperative
    /// pool: a blocked pool thread could starve the very task that holds the lock.
    ///
    /// - Parameters:
    ///   - packagePath: the package, as for the blocking variant.
    ///   - access: `.shared` to read, `.exclusive` to change the package.
    ///   - warn: hears each warning, one line each, on the caller's isolation.
    ///   - isolation: the actor `body` runs on (the caller's by default).
    ///   - body: works on the package; its result is returned.
    /// - Returns: what `body` returns.
    /// - Throws: as the blocking variant.
    /// - Complexity: as the blocking variant, plus one hop to a Dispatch thread when the
    ///   lock is not held already.
    public static func withPackage<R>(
        at packagePath: String, access: Access, warn: (String) -> Void = { _ in },
        isolation: isolated (any Actor)? = #isolation, _ body: (OpenPackage) async throws -> R
    ) async throws -> R {
        let location = try PackageLocation(packagePath)
        if let covered = try enterCovered(location, access: access, durability: .full) {
            covered.warnings.forEach(warn)
            return try await body(covered.package)
        }
        let opened = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Opened, any Error>) in
            DispatchQueue.global().async {
                do { continuation.resume(returning: try open(location, access: access, durability: .full)) } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
        defer { opened.lock?.release() }
        opened.warnings.forEach(warn)
        return try await HeldLocks.with(opened.lock) { try await body(opened.package) }
    }

    /// `withPackage(at:access:warn:_:)` for a resolved location, with the durability of the
    /// recovery an exclusive scope runs (the save's own).
    package static func withPackage<R>(
        at location: PackageLocation, access: Access, durability: Durability = .full, warn: (String) -> Void = { _ in },
        _ body: (OpenPackage) throws -> R
    ) throws -> R {
        if let covered = try enterCovered(location, access: access, durability: durability) {
            covered.warnings.forEach(warn)
            return try body(covered.package)
        }
        let opened = try open(location, access: access, durability: durability)
        defer { opened.lock?.release() }
        opened.warnings.forEach(warn)
        return try HeldLocks.with(opened.lock) { try body(opened.package) }
    }

    // MARK: Entering

    /// A scope entered: the package handed to the body, the lock taken for it (nil when
    /// none was needed) and the warnings for the caller to hear.
    struct Opened: Sendable {
        var package: OpenPackage
        var lock: PackageLock?
        var warnings: [String]
    }

    /// The scope when this task holds a lock on the package already (nil when it does not):
    /// a nested exclusive scope recovers again, a nested shared one does nothing.
    /// - Throws: the refusal of an exclusive scope inside a shared one; recovery's failure.
    static func enterCovered(_ location: PackageLocation, access: Access, durability: Durability) throws -> Opened? {
        guard let held = HeldLocks.access(coveringLockOf: location) else { return nil }
        switch (held, access) {
        case (.shared, .exclusive):
            throw SaveRefusal(path: "\(location)", reason: .lockedForReading)
        case (_, .shared):
            return Opened(package: OpenPackage(location: location, access: .shared), lock: nil, warnings: [])
        case (.exclusive, .exclusive):
            let report = try recoverIfPresent(location, durability: durability)
            return Opened(
                package: OpenPackage(location: location, access: .exclusive, recovery: report), lock: nil,
                warnings: report.warnings)
        }
    }

    /// Takes the lock and recovers, for a scope this task does not hold yet.
    static func open(_ location: PackageLocation, access: Access, durability: Durability) throws -> Opened {
        switch access {
        case .exclusive:
            let lock = try PackageLock.acquire(for: location, exclusive: true)
            do {
                let report = try recoverIfPresent(location, durability: durability)
                return Opened(
                    package: OpenPackage(location: location, access: .exclusive, recovery: report), lock: lock,
                    warnings: report.warnings)
            } catch {
                lock.release()
                throw error
            }
        case .shared:
            var report = PackageRecovery.Report()
            var warnings: [String] = []
            var problem: (any Error)?
            if PackageRecovery.needsRecovery(location) {
                do {
                    let writer = try PackageLock.acquire(for: location, exclusive: true)
                    defer { writer.release() }
                    report = try PackageRecovery.recover(location, durability: durability)
                    warnings = report.warnings
                } catch {
                    problem = error
                    warnings.append("an earlier save of '\(location)' is unfinished (\(error)); reading it as it stands")
                }
            }
            // Readers read on when even the shared lock cannot be taken (the body meets the
            // real trouble, if any); the problem is kept for whoever must not.
            var lock: PackageLock?
            do { lock = try PackageLock.acquireSharedIfPresent(for: location) } catch { problem = problem ?? error }
            let package = OpenPackage(location: location, access: .shared, recovery: report, problem: problem)
            return Opened(package: package, lock: lock, warnings: warnings)
        }
    }

    /// Recovers the package when it exists (a first save has nothing to recover inside).
    private static func recoverIfPresent(_ location: PackageLocation, durability: Durability) throws -> PackageRecovery.Report {
        guard try FileSystem.statusIfExists(location.path) != nil else { return PackageRecovery.Report() }
        return try PackageRecovery.recover(location, durability: durability)
    }
}
