/// The package-side stat data of the entries a save wrote, by index into the new tree.
///
/// A first save of a million files writes every entry, a small edit of the same package
/// writes two. The first keeps a 12-byte record per entry of the tree and two bits: only
/// what the new tree's entry and the save's usual status do not already hold. The entry
/// holds the written file's kind, permissions, size and modification time (the engine set
/// it; a link's is its change time, one bit says so); the save's first status holds the
/// device, link count and owner every other one shares; the record holds the change time
/// and inode as 48-bit offsets from the first one's. A status rebuilt from them is the
/// one recorded (`[FileStatus?]` would cost 72 bytes an entry, the 40-byte record this
/// replaced 40 MB at a million files). The second keeps a dictionary (an array as long as
/// the tree would cost more than the whole save needs). A status the record cannot hold
/// exactly — kind, permissions or size other than the entry's (the kernel may drop a
/// set-group-ID bit), another device, owner or link count, times or inodes far apart —
/// goes to the dictionary in either case.
struct WrittenStatuses: Sendable {
    /// The new tree's entries, which hold the rest of each recorded status.
    private let entries: [SnapshotEntry]
    private var records: [Record]
    private var recorded: EntryBits
    /// Recorded statuses whose modification time is their change time (links).
    private var modifiedAtChange: EntryBits
    /// The first recorded status: what the others share with it, and what their offsets
    /// are from.
    private var usual: FileStatus?
    private var exact: [Int: FileStatus] = [:]

    /// What a written status adds to its entry and to the usual status: its change time
    /// and inode, each as a 48-bit offset from the usual one's (biased by 2⁴⁷), in 12 bytes.
    private struct Record {
        var changeTimeLow: UInt32
        var inodeLow: UInt32
        /// The change time's high 16 offset bits above the inode's.
        var highs: UInt32

        static let zero = Record(changeTimeLow: 0, inodeLow: 0, highs: 0)
        private static let bias: UInt64 = 1 << 47

        /// `status` as a record beside `entry` and `usual`, when they hold all of it.
        init?(_ status: FileStatus, beside entry: SnapshotEntry, usual: FileStatus) {
            guard status.kind == entry.kind, status.permissions == entry.permissions, status.size == entry.size,
                status.device == usual.device, status.linkCount == usual.linkCount, status.userID == usual.userID,
                status.groupID == usual.groupID,
                status.modificationTime == entry.modificationTime || status.modificationTime == status.changeTime,
                let changeTime = Self.offset(UInt64(bitPattern: status.changeTime), from: UInt64(bitPattern: usual.changeTime)),
                let inode = Self.offset(status.inode, from: usual.inode)
            else { return nil }
            self.init(
                changeTimeLow: UInt32(truncatingIfNeeded: changeTime), inodeLow: UInt32(truncatingIfNeeded: inode),
                highs: UInt32(truncatingIfNeeded: changeTime >> 32) << 16 | UInt32(truncatingIfNeeded: inode >> 32))
        }

        private init(changeTimeLow: UInt32, inodeLow: UInt32, highs: UInt32) {
            self.changeTimeLow = changeTimeLow
            self.inodeLow = inodeLow
            self.highs = highs
        }

        /// `value - base`, biased, when it fits in 48 bits.
        private static func offset(_ value: UInt64, from base: UInt64) -> UInt64? {
            let biased = value &- base &+ bias
            return biased < 1 << 48 ? biased : nil
        }

        func status(beside entry: SnapshotEntry, usual: FileStatus, modifiedAtChange: Bool) -> FileStatus {
            let changeTimeOffset = UInt64(highs >> 16) << 32 | UInt64(changeTimeLow)
            let inodeOffset = UInt64(highs & 0xFFFF) << 32 | UInt64(inodeLow)
            let changeTime = Int64(bitPattern: UInt64(bitPattern: usual.changeTime) &+ changeTimeOffset &- Self.bias)
            return FileStatus(
                kind: entry.kind, permissions: entry.permissions, size: entry.size,
                modificationTime: modifiedAtChange ? changeTime : entry.modificationTime, changeTime: changeTime,
                inode: usual.inode &+ inodeOffset &- Self.bias, device: usual.device, linkCount: usual.linkCount,
                userID: usual.userID, groupID: usual.groupID)
        }
    }

    /// Storage for a save of `entries` (the new tree's) that writes about `expectedWrites`.
    init(entries: [SnapshotEntry], expectedWrites: Int) {
        self.entries = entries
        let isDense = expectedWrites >= entries.count / 4 && !entries.isEmpty
        records = isDense ? [Record](repeating: .zero, count: entries.count) : []
        recorded = EntryBits(count: isDense ? entries.count : 0)
        modifiedAtChange = EntryBits(count: isDense ? entries.count : 0)
    }

    /// The status recorded for the entry at `index`, if it was written.
    subscript(index: Int) -> FileStatus? {
        get {
            if let usual, recorded.contains(index) {
                return records[index].status(
                    beside: entries[index], usual: usual, modifiedAtChange: modifiedAtChange.contains(index))
            }
            return exact[index]
        }
        set {
            if !records.isEmpty {
                if let newValue {
                    let usual = self.usual ?? newValue
                    self.usual = usual
                    if let record = Record(newValue, beside: entries[index], usual: usual) {
                        records[index] = record
                        recorded.insert(index)
                        if newValue.modificationTime == entries[index].modificationTime {
                            modifiedAtChange.remove(index)
                        } else {
                            modifiedAtChange.insert(index)
                        }
                        exact[index] = nil
                        return
                    }
                }
                recorded.remove(index)
            }
            exact[index] = newValue
        }
    }

    /// How many statuses the dictionary holds (the rest are records).
    var exactCount: Int { exact.count }

    /// Calls `body` with each written entry's index and status.
    func forEach(_ body: (Int, FileStatus) -> Void) {
        if let usual {
            for index in records.indices where recorded.contains(index) {
                body(
                    index,
                    records[index].status(beside: entries[index], usual: usual, modifiedAtChange: modifiedAtChange.contains(index)))
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
