import Synchronization

/// Feeds the engine's coarse counts into a `ProgressManager` started from a `Subprogress`
/// once the totals are known (the plan decides them).
final class SaveProgressBridge: Sendable {
    private struct State: ~Copyable {
        var subprogress: Subprogress?
        var manager: ProgressManager?
        var reportedUnits = 0
    }

    private let state: Mutex<State>

    init(_ subprogress: consuming Subprogress) {
        state = Mutex(State(subprogress: subprogress))
    }

    /// Both callbacks, in order.
    static func chained(
        _ first: (@Sendable (SaveProgress) -> Void)?, _ second: @escaping @Sendable (SaveProgress) -> Void
    ) -> @Sendable (SaveProgress) -> Void {
        guard let first else { return second }
        return { progress in
            first(progress)
            second(progress)
        }
    }

    func report(_ progress: SaveProgress) {
        let (manager, delta) = state.withLock { state -> (ProgressManager, Int) in
            if state.manager == nil, let subprogress = state.subprogress.take() {
                state.manager = subprogress.start(totalCount: max(progress.totalUnits, 1))
            }
            let delta = max(0, progress.completedUnits - state.reportedUnits)
            state.reportedUnits += delta
            return (state.manager!, delta)
        }
        manager.totalByteCount = UInt64(max(0, progress.totalBytes))
        manager.completedByteCount = UInt64(max(0, progress.completedBytes))
        manager.totalFileCount = progress.totalFiles
        manager.completedFileCount = progress.completedFiles
        if delta > 0 { manager.complete(count: delta) }
    }

    /// Completes whatever was not reported (a save with nothing to do reports no plan).
    func finish() {
        let manager = state.withLock { state -> ProgressManager? in
            if state.manager == nil, let subprogress = state.subprogress.take() {
                state.manager = subprogress.start(totalCount: 1)
            }
            return state.manager
        }
        guard let manager, let total = manager.totalCount else { return }
        let remaining = total - manager.completedCount
        if remaining > 0 { manager.complete(count: remaining) }
    }
}
