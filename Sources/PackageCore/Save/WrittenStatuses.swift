/// The package-side stat data of the entries a save wrote, by index into the new tree.
///
/// A first save of a million files writes every entry, a small edit of the same package
/// writes two: the first is kept in an array as long as the tree (a dictionary of a
/// million statuses costs about three times as much), the second in a dictionary (an
/// array as long as the tree would cost more than the whole save needs).
struct WrittenStatuses: Sendable {
    private var dense: [FileStatus?]
    private var sparse: [Int: FileStatus] = [:]
    private let isDense: Bool

    /// Storage for a save that writes about `expectedWrites` of `entryCount` entries.
    init(entryCount: Int, expectedWrites: Int) {
        isDense = expectedWrites >= entryCount / 4 && entryCount > 0
        dense = isDense ? Array(repeating: nil, count: entryCount) : []
    }

    /// The status recorded for the entry at `index`, if it was written.
    subscript(index: Int) -> FileStatus? {
        get { isDense ? dense[index] : sparse[index] }
        set {
            if isDense { dense[index] = newValue } else { sparse[index] = newValue }
        }
    }

    /// Calls `body` with each written entry's index and status.
    func forEach(_ body: (Int, FileStatus) -> Void) {
        if isDense {
            for (index, status) in dense.enumerated() { if let status { body(index, status) } }
        } else {
            for (index, status) in sparse { body(index, status) }
        }
    }
}

/// The package-side stat data of every entry a save created or replaced, by path
/// (`SaveOutcome.written`), kept as the engine had it — the new tree's entries, shared
/// with the plan, and their statuses by index — rather than as a dictionary keyed by path,
/// which for a first save of a million files would be the largest thing the save holds.
package struct WrittenFiles: Sendable {
    private var entries: [SnapshotEntry]
    private var statuses: WrittenStatuses
    private var byPath: [RelativePath: FileStatus]?

    /// The statuses of `entries` (depth-first in path order) that `statuses` holds.
    init(entries: [SnapshotEntry], statuses: WrittenStatuses) {
        self.entries = entries
        self.statuses = statuses
    }

    /// Statuses given by path (an outcome made outside the engine).
    init(_ byPath: [RelativePath: FileStatus]) {
        self.entries = []
        self.statuses = WrittenStatuses(entryCount: 0, expectedWrites: 0)
        self.byPath = byPath
    }

    /// Calls `body` with each written path and its status, in no particular order.
    package func forEach(_ body: (RelativePath, FileStatus) -> Void) {
        if let byPath {
            for (path, status) in byPath { body(path, status) }
        } else {
            statuses.forEach { index, status in body(RelativePath(trusted: entries[index].path), status) }
        }
    }

    /// The status of the entry written at `path`, if this save wrote it.
    /// - Complexity: O(log n) path comparisons.
    package func status(at path: RelativePath) -> FileStatus? {
        if let byPath { return byPath[path] }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            let order = PathOrder.compareBytes(entries[middle].path, path.string, slashIsLowest: true)
            if order == 0 { return statuses[middle] }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// Every path written with its status, as a dictionary.
    /// - Complexity: O(n): built on each call.
    var dictionary: [RelativePath: FileStatus] {
        if let byPath { return byPath }
        var result: [RelativePath: FileStatus] = [:]
        forEach { path, status in result[path] = status }
        return result
    }
}
