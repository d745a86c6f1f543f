/// The package-side stat data of the entries a save wrote, by index into the new tree.
///
/// A first save of a million files writes every entry, a small edit of the same package
/// writes two. The first keeps a 40-byte record per entry of the tree and a bit saying
/// which were written: only what the new tree's entry does not already hold (its kind,
/// permissions and size are the written file's), rebuilt into a `FileStatus` on reading
/// (`[FileStatus?]` would cost 72 bytes an entry, a dictionary about three times that).
/// The second keeps a dictionary (an array as long as the tree would cost more than the
/// whole save needs). A status the record cannot hold exactly — kind, permissions or size
/// other than the entry's (the kernel may drop a set-group-ID bit), a device or link
/// count beyond 32 bits — goes to the dictionary in either case.
struct WrittenStatuses: Sendable {
    /// The new tree's entries, which hold the rest of each recorded status.
    private let entries: [SnapshotEntry]
    private var records: [Record]
    private var recorded: EntryBits
    private var exact: [Int: FileStatus] = [:]

    /// What a written status adds to its entry.
    private struct Record {
        var modificationTime: Int64
        var changeTime: Int64
        var inode: UInt64
        var device: UInt32
        var linkCount: UInt32
        var userID: UInt32
        var groupID: UInt32

        static let zero = Record(
            modificationTime: 0, changeTime: 0, inode: 0, device: 0, linkCount: 0, userID: 0, groupID: 0)

        /// `status` as a record beside `entry`, when it holds all of it.
        init?(_ status: FileStatus, beside entry: SnapshotEntry) {
            guard status.kind == entry.kind, status.permissions == entry.permissions, status.size == entry.size,
                let device = UInt32(exactly: status.device), let linkCount = UInt32(exactly: status.linkCount)
            else { return nil }
            self.init(
                modificationTime: status.modificationTime, changeTime: status.changeTime, inode: status.inode,
                device: device, linkCount: linkCount, userID: status.userID, groupID: status.groupID)
        }

        private init(
            modificationTime: Int64, changeTime: Int64, inode: UInt64, device: UInt32, linkCount: UInt32,
            userID: UInt32, groupID: UInt32
        ) {
            self.modificationTime = modificationTime
            self.changeTime = changeTime
            self.inode = inode
            self.device = device
            self.linkCount = linkCount
            self.userID = userID
            self.groupID = groupID
        }

        func status(beside entry: SnapshotEntry) -> FileStatus {
            FileStatus(
                kind: entry.kind, permissions: entry.permissions, size: entry.size,
                modificationTime: modificationTime, changeTime: changeTime, inode: inode, device: UInt64(device),
                linkCount: UInt64(linkCount), userID: userID, groupID: groupID)
        }
    }

    /// Storage for a save of `entries` (the new tree's) that writes about `expectedWrites`.
    init(entries: [SnapshotEntry], expectedWrites: Int) {
        self.entries = entries
        let isDense = expectedWrites >= entries.count / 4 && !entries.isEmpty
        records = isDense ? [Record](repeating: .zero, count: entries.count) : []
        recorded = EntryBits(count: isDense ? entries.count : 0)
    }

    /// The status recorded for the entry at `index`, if it was written.
    subscript(index: Int) -> FileStatus? {
        get {
            if !records.isEmpty && recorded.contains(index) { return records[index].status(beside: entries[index]) }
            return exact[index]
        }
        set {
            if !records.isEmpty {
                if let newValue, let record = Record(newValue, beside: entries[index]) {
                    records[index] = record
                    recorded.insert(index)
                    exact[index] = nil
                    return
                }
                recorded.remove(index)
            }
            exact[index] = newValue
        }
    }

    /// Calls `body` with each written entry's index and status.
    func forEach(_ body: (Int, FileStatus) -> Void) {
        if !records.isEmpty {
            for index in records.indices where recorded.contains(index) {
                body(index, records[index].status(beside: entries[index]))
            }
        }
        for (index, status) in exact { body(index, status) }
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
        self.statuses = WrittenStatuses(entries: [], expectedWrites: 0)
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
