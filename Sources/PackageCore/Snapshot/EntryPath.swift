/// The folder part of the paths of sibling entries, stored once for all of them.
///
/// A tree of a million files holds a million paths; most share their folder with many
/// siblings, and most names fit inside a `String` without a heap allocation (15 bytes or
/// fewer). Storing each path as its folder (shared) and its name (inline) instead of one
/// heap string saves about 80 bytes an entry (Specs/manifest.md, "Memory").
package final class SharedFolder: Sendable {
    /// The folder's relative path: "/"-separated, never empty.
    let path: String

    init(_ path: String) { self.path = path }
}

/// How a `SnapshotEntry` stores its path: a shared folder and a name, or one whole string.
/// Equal and hashed by the bytes of the whole path, however it is stored.
package struct EntryPath: Sendable, Hashable {
    /// The folder holding the entry, shared with its siblings; nil when `tail` is the whole
    /// path (a top-level entry, or one built from a path string).
    var folder: SharedFolder?
    /// The entry's name when `folder` is set; otherwise its whole path.
    var tail: String

    /// The path kept whole, as given.
    package init(whole path: String) {
        folder = nil
        tail = path
    }

    /// `name` inside `folder` (nil: the top level).
    package init(folder: SharedFolder?, name: String) {
        self.folder = folder
        tail = name
    }

    /// The whole path as one string (a new string when the folder is shared).
    package var string: String {
        guard folder != nil else { return tail }
        return withBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The path's length in UTF-8 bytes, without assembling it.
    package var byteCount: Int { (folder.map { $0.path.utf8.count + 1 } ?? 0) + tail.utf8.count }

    /// The last component.
    var name: Substring {
        if folder != nil { return tail[...] }
        if let slash = tail.utf8.lastIndex(of: UInt8(ascii: "/")) { return tail[tail.index(after: slash)...] }
        return tail[...]
    }

    /// Components below the root minus one: 0 for a top-level entry.
    var depth: Int {
        let slashesInTail = tail.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
        guard let folder else { return slashesInTail }
        return folder.path.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) } + slashesInTail
    }

    /// Calls `body` with the path's UTF-8 bytes, assembled on the stack when the folder is
    /// shared (no heap allocation for the paths of any real tree).
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var tail = tail
        guard let folder else { return try tail.withUTF8 { try body(UnsafeRawBufferPointer($0)) } }
        var folderPath = folder.path
        return try folderPath.withUTF8 { head in
            try tail.withUTF8 { name in
                try withUnsafeTemporaryAllocation(byteCount: head.count + 1 + name.count, alignment: 1) { buffer in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(head))
                    buffer[head.count] = UInt8(ascii: "/")
                    UnsafeMutableRawBufferPointer(rebasing: buffer[(head.count + 1)...]).copyMemory(
                        from: UnsafeRawBufferPointer(name))
                    return try body(UnsafeRawBufferPointer(buffer))
                }
            }
        }
    }

    /// -1, 0 or 1 in depth-first path order (`PathOrder.pathLess`), by bytes. Siblings
    /// (one shared folder) compare by name alone.
    static func compare(_ lhs: EntryPath, _ rhs: EntryPath) -> Int {
        if lhs.folder === rhs.folder {
            var left = lhs.tail
            var right = rhs.tail
            return left.withUTF8 { a in
                right.withUTF8 { b in
                    PathOrder.compare(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b), slashIsLowest: true)
                }
            }
        }
        return lhs.withBytes { a in rhs.withBytes { b in PathOrder.compare(a, b, slashIsLowest: true) } }
    }

    package static func == (lhs: EntryPath, rhs: EntryPath) -> Bool { compare(lhs, rhs) == 0 }

    package func hash(into hasher: inout Hasher) { withBytes { hasher.combine(bytes: $0) } }

    /// -1, 0 or 1 against a path string, in depth-first path order, by bytes.
    func compare(to path: String) -> Int {
        var other = path
        return withBytes { a in
            other.withUTF8 { b in PathOrder.compare(a, UnsafeRawBufferPointer(b), slashIsLowest: true) }
        }
    }
}

/// Shares the folder part of paths that arrive one by one (a manifest's records, a
/// version's entries): each new path's folder is compared, as bytes, with the folders
/// seen at its depth most recently, so a depth-first stream shares every folder.
package struct FolderInterner {
    /// The most recent folder of each depth: `recent[d]` has d + 1 components.
    private var recent: [SharedFolder] = []

    package init() {}

    /// The stored form of `bytes` (a whole relative path, valid UTF-8).
    package mutating func path(_ bytes: UnsafeRawBufferPointer) -> EntryPath {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else {
            return EntryPath(folder: nil, name: String(decoding: bytes, as: UTF8.self))
        }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(slash + 1)...]), as: UTF8.self)
        return EntryPath(folder: folder(UnsafeRawBufferPointer(rebasing: bytes[..<slash])), name: name)
    }

    /// The stored form of a path string.
    package mutating func path(_ text: String) -> EntryPath {
        var text = text
        return text.withUTF8 { path(UnsafeRawBufferPointer($0)) }
    }

    /// The shared folder of the given bytes: the recent one of that depth when the bytes
    /// match, else a new one that becomes the recent one (deeper ones are forgotten).
    private mutating func folder(_ bytes: UnsafeRawBufferPointer) -> SharedFolder {
        let depth = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
        if depth < recent.count {
            var known = recent[depth].path
            let same = known.withUTF8 { $0.count == bytes.count && PathOrder.compare(UnsafeRawBufferPointer($0), bytes, slashIsLowest: false) == 0 }
            if same { return recent[depth] }
        }
        let made = SharedFolder(String(decoding: bytes, as: UTF8.self))
        if depth < recent.count {
            recent[depth] = made
            recent.removeSubrange((depth + 1)...)
        } else {
            // A folder deeper than any seen: its parents are unknown here (out-of-order
            // input); fill the gap with itself so the depths stay aligned.
            while recent.count < depth { recent.append(made) }
            recent.append(made)
        }
        return made
    }
}
