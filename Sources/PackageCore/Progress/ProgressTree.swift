import Synchronization

/// The shared state of one tree of progress managers, under one lock.
///
/// One lock per tree, not per manager: a completion updates a node and then every
/// ancestor's fraction, and a reader computes a fraction from a node's children; with one
/// lock neither can see a half-propagated update and no lock order can deadlock. Updates
/// are coarse (a file, a 1 MiB chunk), so contention is negligible.
final class ProgressTree: Sendable {
    let state = Mutex(State())

    struct State {
        var nodes: [Int: Node] = [:]
        var nextIdentifier = 0

        mutating func add(_ node: Node) -> Int {
            let identifier = nextIdentifier
            nextIdentifier += 1
            nodes[identifier] = node
            if let parent = node.parent { nodes[parent]?.children.append(identifier) }
            return identifier
        }
    }

    /// One manager's numbers.
    struct Node {
        var totalCount: Int?
        var completedCount = 0
        var counts = ProgressCounts()
        /// The parent node and the units of it this node stands for.
        var parent: Int?
        var portionOfParent = 0
        /// Whether `portionOfParent` was already added to the parent's completed count
        /// (when this node finished): from then on it no longer adds a fraction.
        var folded = false
        /// Live child nodes.
        var children: [Int] = []
        /// The counts of children that went away, kept so subtree summaries do not shrink.
        var departedCounts = ProgressCounts()
        /// The manager, for observation notices. Weak: the manager owns its node.
        weak var manager: ProgressManager?

        var isFinished: Bool {
            guard let totalCount else { return false }
            return completedCount >= totalCount
        }
    }
}

/// The byte and file counts of one manager, or of a subtree summed.
struct ProgressCounts: Sendable, Equatable {
    var totalByteCount: UInt64 = 0
    var completedByteCount: UInt64 = 0
    var totalFileCount = 0
    var completedFileCount = 0

    static func + (lhs: ProgressCounts, rhs: ProgressCounts) -> ProgressCounts {
        ProgressCounts(
            totalByteCount: lhs.totalByteCount &+ rhs.totalByteCount,
            completedByteCount: lhs.completedByteCount &+ rhs.completedByteCount,
            totalFileCount: lhs.totalFileCount &+ rhs.totalFileCount,
            completedFileCount: lhs.completedFileCount &+ rhs.completedFileCount)
    }
}

extension ProgressTree.State {
    /// The fraction of `identifier` done: its completed units plus each unfolded live
    /// child's share, over its total; 0 when indeterminate, 1 for a total of 0.
    func fraction(of identifier: Int) -> Double {
        guard let node = nodes[identifier], let total = node.totalCount else { return 0 }
        if total <= 0 { return 1 }
        if node.completedCount >= total { return 1 }
        var done = Double(max(0, node.completedCount))
        for child in node.children {
            guard let childNode = nodes[child], !childNode.folded else { continue }
            done += Double(childNode.portionOfParent) * fraction(of: child)
        }
        return min(1, max(0, done / Double(total)))
    }

    /// The counts of `identifier` and everything below it, departed children included.
    func summary(of identifier: Int) -> ProgressCounts {
        guard let node = nodes[identifier] else { return ProgressCounts() }
        var result = node.counts + node.departedCounts
        for child in node.children { result = result + summary(of: child) }
        return result
    }

    /// After a change to `identifier`: while a node has just finished, its share counts as
    /// completed in its parent, which may finish in turn.
    mutating func foldFinished(from identifier: Int) {
        var current = identifier
        while let node = nodes[current], node.isFinished, !node.folded, let parent = node.parent {
            nodes[current]!.folded = true
            guard nodes[parent] != nil else { return }
            nodes[parent]!.completedCount += node.portionOfParent
            current = parent
        }
    }

    /// The managers of `identifier` and its ancestors that are still alive, to notify.
    func managersToNotify(from identifier: Int) -> [ProgressManager] {
        var result: [ProgressManager] = []
        var current: Int? = identifier
        while let node = current.flatMap({ nodes[$0] }) {
            if let manager = node.manager { result.append(manager) }
            current = node.parent
        }
        return result
    }

    /// A manager went away: an unfinished one completes (its share counts as done in its
    /// parent), its counts join its parent's departed counts, and its node is removed.
    mutating func removeNode(_ identifier: Int) -> Int? {
        guard let node = nodes[identifier] else { return nil }
        let totals = summary(of: identifier)
        nodes[identifier] = nil
        for child in node.children { nodes[child]?.parent = nil }
        guard let parent = node.parent, nodes[parent] != nil else { return nil }
        nodes[parent]!.children.removeAll { $0 == identifier }
        nodes[parent]!.departedCounts = nodes[parent]!.departedCounts + totals
        if !node.folded { nodes[parent]!.completedCount += node.portionOfParent }
        foldFinished(from: parent)
        return parent
    }
}
