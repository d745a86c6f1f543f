import Observation

/// Reports the progress of one task, as swift-foundation's `ProgressManager` (SF-0023).
///
/// A task gets a `Subprogress` from its caller and calls `start(totalCount:)` on it to
/// get its manager, then `complete(count:)` as units finish; it hands parts of its own
/// work to callees with `subprogress(assigningCount:)`. A parent's `fractionCompleted`
/// includes the fractions of its children, weighted by the units assigned to them.
///
/// Units should be coarse (files, 1 MiB chunks), never bytes: every update takes a lock
/// and notifies observers. Byte and file counts for display are separate properties.
///
/// Sendable and observable (Observation): read it from any task or thread while the work
/// runs elsewhere. A manager dropped before it finished completes its share, as SF-0023
/// specifies for cancellation.
public final class ProgressManager: Sendable, Observable {
    let tree: ProgressTree
    let identifier: Int
    let registrar = ObservationRegistrar()

    /// A root manager with `totalCount` units; nil for an indeterminate total.
    public convenience init(totalCount: Int?) {
        self.init(tree: ProgressTree(), parent: nil, portion: 0, totalCount: totalCount)
    }

    /// A manager in `tree` below `parent`, standing for `portion` of the parent's units.
    init(tree: ProgressTree, parent: Int?, portion: Int, totalCount: Int?) {
        self.tree = tree
        var node = ProgressTree.Node(totalCount: totalCount)
        node.parent = parent
        node.portionOfParent = portion
        identifier = tree.state.withLock { $0.add(node) }
        tree.state.withLock { state in
            state.nodes[identifier]?.manager = self
            state.foldFinished(from: identifier)
        }
        // A child that starts already finished (a total of 0) moved its parent.
        if parent != nil { notify(from: identifier, includingSelf: false) }
    }

    deinit {
        let parent = tree.state.withLock { $0.removeNode(identifier) }
        if let parent { notify(from: parent, includingSelf: true) }
    }

    // MARK: Reading

    /// The total units of work; nil when indeterminate.
    public var totalCount: Int? { read { $0.nodes[identifier]?.totalCount } }

    /// The units completed, including the shares of children that finished.
    public var completedCount: Int { read { $0.nodes[identifier]?.completedCount ?? 0 } }

    /// The part of the work done, from 0 to 1, counting running children's fractions.
    /// 0 while indeterminate; 1 for a total of 0.
    public var fractionCompleted: Double { read { $0.fraction(of: identifier) } }

    /// Whether the total is unknown.
    public var isIndeterminate: Bool { totalCount == nil }

    /// Whether the completed count reached the total.
    public var isFinished: Bool { read { $0.nodes[identifier]?.isFinished ?? true } }

    // MARK: Reporting

    /// Adds `count` completed units.
    public func complete(count: Int) {
        update { node in node.completedCount += count }
    }

    /// A `Subprogress` standing for `count` of this manager's units, to hand to a callee.
    /// The callee's manager then moves this one; if the callee never starts it, the units
    /// complete when the `Subprogress` is dropped.
    public func subprogress(assigningCount count: Int) -> Subprogress {
        precondition(count >= 0, "subprogress(assigningCount:) needs a count of at least 0")
        return Subprogress(tree: tree, parent: identifier, portion: count)
    }

    // MARK: Internals

    /// Records an access for observers, then reads under the tree's lock.
    func read<T: Sendable>(_ body: (borrowing ProgressTree.State) -> T) -> T {
        registrar.access(self, keyPath: \.fractionCompleted)
        return tree.state.withLock { body($0) }
    }

    /// Changes this manager's node, folds finished nodes into their parents, and notifies
    /// the observers of this manager and of its ancestors.
    func update(_ change: (inout ProgressTree.Node) -> Void) {
        tree.state.withLock { state in
            guard state.nodes[identifier] != nil else { return }
            change(&state.nodes[identifier]!)
            state.foldFinished(from: identifier)
        }
        notify(from: identifier, includingSelf: true)
    }

    /// Tells observers of `identifier` (optionally) and its ancestors that values changed.
    /// Called after the change and outside the lock: observers may read right away.
    func notify(from identifier: Int, includingSelf: Bool) {
        var managers = tree.state.withLock { $0.managersToNotify(from: identifier) }
        if !includingSelf, managers.first === self { managers.removeFirst() }
        for manager in managers {
            manager.registrar.withMutation(of: manager, keyPath: \.fractionCompleted) {}
        }
    }
}

extension ProgressManager: Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Identity: two managers are equal only when they are the same object.
    public static func == (lhs: ProgressManager, rhs: ProgressManager) -> Bool { lhs === rhs }
    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// "3 of 10 (30%)": completed and total units and the fraction.
    public var description: String {
        let (total, completed, fraction) = tree.state.withLock { state in
            (state.nodes[identifier]?.totalCount, state.nodes[identifier]?.completedCount ?? 0,
                state.fraction(of: identifier))
        }
        let totalText = total.map(String.init) ?? "?"
        return "\(completed) of \(totalText) (\(Int((fraction * 100).rounded(.down)))%)"
    }

    /// The description with the byte and file counts.
    public var debugDescription: String {
        let counts = tree.state.withLock { $0.nodes[identifier]?.counts ?? ProgressCounts() }
        return "ProgressManager(\(description), bytes \(counts.completedByteCount)/\(counts.totalByteCount), "
            + "files \(counts.completedFileCount)/\(counts.totalFileCount))"
    }
}
