import PackageCore

/// The calls for async code (a document app): each runs on a thread of its own, so a push
/// that waits on the network for minutes never holds one of the few threads of Swift's
/// concurrency pool, and cancelling the calling task cancels the operation as
/// ``TransferCancellation/cancel()`` does (it throws ``RemoteError/Kind/cancelled``; the
/// remote's versions and the package stay intact, and the next call picks up what arrived).
extension PackageRemote {
    /// Pushes the package at `packagePath` as the remote's next version, off the caller's
    /// thread: the blocking `push` for async code.
    /// - Parameters:
    ///   - packagePath: the package directory.
    ///   - location: the remote, `s3://BUCKET/PREFIX`.
    ///   - options: the store's configuration and the transfer settings.
    ///   - force: push even when the remote moved on since the package was last synced.
    ///   - progress: receives the push's progress (bytes of new content sent).
    /// - Complexity: as the blocking call.
    public static func push(
        _ packagePath: String, to location: RemoteLocation, options: RemoteOptions, force: Bool = false,
        progress: consuming Subprogress? = nil
    ) async throws -> PushResult {
        let manager = progress.take()?.start(totalCount: nil)
        return try await onOwnThread(options) { options in
            let store = RemoteStore(location: location, options: options)
            return try PushOperation.run(
                packagePath: packagePath, store: store, options: options, force: force, progress: manager)
        }
    }

    /// Makes `destination` hold a version of the remote, off the caller's thread: the
    /// blocking `pull` for async code.
    /// - Parameters:
    ///   - location: the remote, `s3://BUCKET/PREFIX`.
    ///   - destination: the package to create or bring to the version.
    ///   - version: an id, a unique prefix of one, or a sequence number; nil for the head.
    ///   - options: the store's configuration and the transfer settings.
    ///   - force: pull even when `destination` changed since it was last synced.
    ///   - durability: how the save engine flushes `destination`.
    ///   - progress: receives the pull's progress.
    /// - Complexity: as the blocking call.
    public static func pull(
        _ location: RemoteLocation, to destination: String, version: String? = nil, options: RemoteOptions,
        force: Bool = false, durability: Durability = .full, progress: consuming Subprogress? = nil
    ) async throws -> PullResult {
        let manager = progress.take()?.start(totalCount: nil)
        return try await onOwnThread(options) { options in
            try PruneOperation.pullingThroughPrunes(location: location, options: options) { store in
                try PullOperation.run(
                    destination: destination, store: store, options: options, version: version, force: force,
                    durability: durability, progress: manager)
            }
        }
    }

    /// Deletes the versions `policy` does not keep and the bytes only they used, off the
    /// caller's thread: the blocking `prune` for async code.
    /// - Parameters:
    ///   - location: the remote, `s3://BUCKET/PREFIX`.
    ///   - policy: which versions to keep (the head always).
    ///   - options: the store's configuration and the transfer settings.
    ///   - grace: nanoseconds an object no version names is kept after it was written.
    ///   - dryRun: plan only.
    ///   - progress: receives the prune's progress.
    /// - Complexity: as the blocking call.
    public static func prune(
        _ location: RemoteLocation, policy: PrunePolicy, options: RemoteOptions, grace: Int64 = 3600 * 1_000_000_000,
        dryRun: Bool = false, progress: consuming Subprogress? = nil
    ) async throws -> PruneResult {
        let manager = progress.take()?.start(totalCount: nil)
        return try await onOwnThread(options) { options in
            try PruneOperation.run(
                store: RemoteStore(location: location, options: options), policy: policy, grace: grace, dryRun: dryRun,
                progress: manager)
        }
    }

    /// Syncs the package at `packagePath` with the remote, off the caller's thread: the
    /// blocking `sync` for async code.
    /// - Complexity: as the blocking call.
    public static func sync(
        _ packagePath: String, with location: RemoteLocation?, options: RemoteOptions, durability: Durability = .full,
        progress: consuming Subprogress? = nil
    ) async throws -> SyncResult {
        let manager = progress.take()?.start(totalCount: nil)
        let (location, options) = try syncTarget(location, packagePath, options)
        return try await onOwnThread(options) { options in
            let store = RemoteStore(location: location, options: options)
            return try SyncOperation.run(
                packagePath: packagePath, store: store, options: options, durability: durability, progress: manager)
        }
    }

    /// The remote's versions, newest first (at most `limit`), off the caller's thread.
    /// - Complexity: as the blocking `log`.
    public static func log(_ location: RemoteLocation, options: RemoteOptions, limit: Int? = nil) async throws
        -> [VersionSummary]
    {
        try await onOwnThread(options) { options in
            try LogOperation.run(store: RemoteStore(location: location, options: options), limit: limit)
        }
    }

    /// Runs `body` on a new thread with options whose cancellation the calling task's
    /// cancellation raises.
    private static func onOwnThread<Result: Sendable>(
        _ options: RemoteOptions, _ body: @escaping @Sendable (RemoteOptions) throws -> Result
    ) async throws -> Result {
        var options = options
        let cancellation = options.cancellation ?? TransferCancellation()
        options.cancellation = cancellation
        let ready = options
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                DetachedThread.startRequired(stackSize: 8 << 20) {
                    continuation.resume(with: Swift.Result { try body(ready) })
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }
}
