/// A share of a parent manager's units, handed to a function that reports progress
/// (SF-0023). Non-copyable, so it is used once: the callee calls `start(totalCount:)` to
/// get its own `ProgressManager`. Dropped without being started (an early return, an
/// error), its units complete in the parent, so the parent still reaches 1.
public struct Subprogress: ~Copyable, Sendable {
    private var assignment: Assignment?

    private struct Assignment: Sendable {
        var tree: ProgressTree
        var parent: Int
        var portion: Int
    }

    init(tree: ProgressTree, parent: Int, portion: Int) {
        assignment = Assignment(tree: tree, parent: parent, portion: portion)
    }

    /// The callee's manager, with `totalCount` units of its own (nil: indeterminate),
    /// standing for this subprogress's share of the parent.
    public consuming func start(totalCount: Int?) -> ProgressManager {
        guard let assignment else { return ProgressManager(totalCount: totalCount) }
        self.assignment = nil
        let parentAlive = assignment.tree.state.withLock { $0.nodes[assignment.parent] != nil }
        return ProgressManager(
            tree: assignment.tree, parent: parentAlive ? assignment.parent : nil, portion: assignment.portion,
            totalCount: totalCount)
    }

    deinit {
        guard let assignment else { return }
        let parent = assignment.parent
        let alive = assignment.tree.state.withLock { state -> Bool in
            guard state.nodes[parent] != nil else { return false }
            state.nodes[parent]!.completedCount += assignment.portion
            state.foldFinished(from: parent)
            return true
        }
        if !alive { return }
        let managers = assignment.tree.state.withLock { $0.managersToNotify(from: parent) }
        for manager in managers {
            manager.registrar.withMutation(of: manager, keyPath: \.fractionCompleted) {}
        }
    }
}
