import Glibc

/// What a recorded tree (a manifest's) knows of files by their position in it: the scan's
/// stat cache, asked without a search of the whole tree per file (`TreeScanner.recordedContent`).
package struct RecordedContentLookup: Sendable {
    /// The recorded tree, depth-first with descendant counts.
    package let snapshot: TreeSnapshot
    /// What is known of the file recorded at `index`, given its `status` now; nil when the
    /// status does not vouch for the record (the file must be read).
    package let known: @Sendable (_ index: Int, _ status: FileStatus) -> KnownContent?

    package init(snapshot: TreeSnapshot, known: @escaping @Sendable (_ index: Int, _ status: FileStatus) -> KnownContent?) {
        self.snapshot = snapshot
        self.known = known
    }
}

/// The recorded children of one directory, walked in name order beside its sorted listing:
/// each lookup moves forward past the children (and their subtrees, by descendant count)
/// whose names come before the one asked for.
///
/// - Complexity: one `index(of:)` for the directory, then O(children) byte comparisons
///   for all the lookups of its listing together (names asked in increasing byte order).
struct RecordedChildren {
    private let entries: [SnapshotEntry]
    private var next: Int
    private let end: Int
    /// The index of the directory's first recorded child (`end` when it has none).
    let first: Int
    /// The directory's path and its "/" ("" at the root).
    private let prefix: String

    /// The children of `directory` ("" for the root) in `snapshot`; none when it records no
    /// directory there.
    init(_ snapshot: TreeSnapshot, directory: String) {
        entries = snapshot.entries
        if directory.isEmpty {
            next = 0
            end = entries.count
            prefix = ""
        } else if let index = snapshot.index(of: directory), entries[index].kind == .directory {
            next = index + 1
            end = min(entries.count, index + 1 + entries[index].descendantCount)
            prefix = directory + "/"
        } else {
            next = 0
            end = 0
            prefix = ""
        }
        first = next
    }

    /// How many children the directory has in the record (its subtrees' entries not counted).
    var count: Int {
        var count = 0
        var index = first
        while index < end {
            count += 1
            index += 1 + max(0, entries[index].descendantCount)
        }
        return count
    }

    /// The index of the child named `name`, nil when none is recorded. Names must be asked
    /// in increasing byte order: those before `name` are passed for good.
    mutating func index(ofChild name: String) -> Int? {
        var name = name
        var prefix = prefix
        return name.withUTF8 { nameBytes in
            prefix.withUTF8 { prefixBytes in
                index(ofChild: UnsafeRawBufferPointer(nameBytes), prefix: UnsafeRawBufferPointer(prefixBytes))
            }
        }
    }

    private mutating func index(ofChild name: UnsafeRawBufferPointer, prefix: UnsafeRawBufferPointer) -> Int? {
        while next < end {
            // The path past the prefix against the name, and whether the prefix is the path's.
            let (order, underPrefix) = entries[next].withPathBytes { path -> (Int, Bool) in
                guard path.count >= prefix.count else { return (-1, false) }
                let order = PathOrder.compare(UnsafeRawBufferPointer(rebasing: path[prefix.count...]), name, slashIsLowest: true)
                let underPrefix = prefix.isEmpty || memcmp(path.baseAddress!, prefix.baseAddress!, prefix.count) == 0
                return (order, underPrefix)
            }
            if order > 0 { return nil }
            let found = next
            next += 1 + max(0, entries[next].descendantCount)
            // Equal past the prefix: the whole path must be the directory's and this name.
            if order == 0 { return underPrefix ? found : nil }
        }
        return nil
    }
}
