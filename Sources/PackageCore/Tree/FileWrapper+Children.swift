import FoundationEssentials

extension FileWrapper {
    /// A directory's children by key (nil for other kinds).
    ///
    /// Keys are compared as bytes inside the wrapper, but a Swift dictionary equates
    /// canonically equivalent strings: should a directory hold two such names (possible on
    /// Linux, e.g. "é" precomposed and decomposed), this dictionary shows the one that sorts
    /// last by bytes. `orderedFileWrappers` lists every child.
    public var fileWrappers: [String: FileWrapper]? {
        guard let children = sortedChildren else { return nil }
        var result: [String: FileWrapper] = [:]
        result.reserveCapacity(children.count)
        for (name, child) in children { result[name.string] = child }
        return result
    }

    /// A directory's children in byte order of their keys, every one of them (nil for
    /// other kinds): the order of hashing, snapshots and writes.
    public var orderedFileWrappers: [(key: String, fileWrapper: FileWrapper)]? {
        sortedChildren?.map { ($0.name.string, $0.child) }
    }

    /// The child stored under exactly `key` (byte for byte), or nil.
    public func fileWrapper(forKey key: String) -> FileWrapper? {
        state.withLock { $0.children[FileName(key)] }
    }

    /// Adds `child` to this directory under its preferred filename, or a unique variant of
    /// it ("2 - name", "3 - name"…) when a child already uses the name. Returns the key.
    ///
    /// Adding a wrapper this directory already holds changes nothing and returns its key.
    /// The child must have a preferred filename (as Apple's requires). A name that cannot
    /// be a file name ("/", NUL, "", "." or "..") is repaired (see `FileName.sanitized`).
    /// - Complexity: O(depth) to invalidate the cached hashes above; no disk access.
    @discardableResult
    public func addFileWrapper(_ child: FileWrapper) -> String {
        precondition(kind == .directory, "addFileWrapper(_:) needs a directory wrapper")
        guard let preferred = child.preferredFilename else {
            preconditionFailure("addFileWrapper(_:) needs a child with a preferredFilename")
        }
        if let existing = key(of: child) { return existing.string }
        precondition(!child.isSelfOrAncestor(of: self), "adding this wrapper would make a directory contain itself")
        let key = state.withLock { node in
            let key = FileWrapper.uniqueKey(in: node.children, for: FileName.sanitized(preferred))
            node.children[FileName(key)] = child
            node.directoryEditedSinceRead = true
            return key
        }
        child.state.withLock { $0.parentLinks.append(ParentLink(self)) }
        invalidateContentHash()
        markEdited()
        return key
    }

    /// Creates a regular-file wrapper holding `data`, named `fileName`, and adds it.
    /// Returns its key.
    @discardableResult
    public func addRegularFile(withContents data: Data, preferredFilename fileName: String) -> String {
        let child = FileWrapper(regularFileWithContents: data)
        child.preferredFilename = fileName
        return addFileWrapper(child)
    }

    /// Creates a symbolic-link wrapper to `url`, named `fileName`, and adds it. Returns its key.
    @discardableResult
    public func addSymbolicLink(withDestinationURL url: URL, preferredFilename fileName: String) -> String {
        let child = FileWrapper(symbolicLinkWithDestinationURL: url)
        child.preferredFilename = fileName
        return addFileWrapper(child)
    }

    /// Removes `child` from this directory; nothing happens when it is not a child.
    ///
    /// - Complexity: O(children) to find it, O(depth) to invalidate the hashes above.
    public func removeFileWrapper(_ child: FileWrapper) {
        // (One wrapper may sit under two keys, from `init(directoryWithFileWrappers:)`: it
        // keeps its link to this directory while another key still holds it.)
        let (removed, stillHeld) = state.withLock { node -> (Bool, Bool) in
            guard node.kind == .directory, let name = node.children.first(where: { $0.value === child })?.key else {
                return (false, false)
            }
            node.children[name] = nil
            node.directoryEditedSinceRead = true
            return (true, node.children.values.contains { $0 === child })
        }
        guard removed else { return }
        if !stillHeld { child.state.withLock { $0.parentLinks.removeAll { $0.parent === self || $0.parent == nil } } }
        invalidateContentHash()
        markEdited()
    }

    /// The key under which this directory holds `child`, or nil.
    ///
    /// - Complexity: O(children).
    public func keyForChild(_ child: FileWrapper) -> String? {
        key(of: child)?.string
    }

    /// Apple's Swift name for `keyForChild(_:)`.
    public func keyForChildFileWrapper(_ child: FileWrapper) -> String? {
        keyForChild(child)
    }

    // MARK: Internals

    /// Children sorted by the bytes of their keys; nil for other kinds.
    var sortedChildren: [(name: FileName, child: FileWrapper)]? {
        state.withLock { node -> [(name: FileName, child: FileWrapper)]? in
            guard node.kind == .directory else { return nil }
            if let sorted = node.sortedChildren { return sorted }
            let sorted = node.children.map { ($0.key, $0.value) }.sorted { PathOrder.nameLess($0.0.string, $1.0.string) }
            node.sortedChildren = sorted
            return sorted
        }
    }

    /// The live directories holding this wrapper.
    var parents: [FileWrapper] {
        state.withLock { node in
            node.parentLinks.removeAll { $0.parent == nil }
            return node.parentLinks.compactMap(\.parent)
        }
    }

    func key(of child: FileWrapper) -> FileName? {
        state.withLock { $0.children.first(where: { $0.value === child })?.key }
    }

    /// `preferred` if no child uses it, else the first free "N - preferred", N from 2.
    static func uniqueKey(in children: [FileName: FileWrapper], for preferred: String) -> String {
        if children[FileName(preferred)] == nil { return preferred }
        var number = 2
        while true {
            let candidate = "\(number) - \(preferred)"
            if children[FileName(candidate)] == nil { return candidate }
            number += 1
        }
    }

    /// Gives `child` a key from its new preferred filename (Apple's parents remove and
    /// re-add a child whose preferred name changes).
    func rekey(_ child: FileWrapper) {
        guard let preferred = child.preferredFilename else { return }
        let wanted = FileName.sanitized(preferred)
        let changed = state.withLock { node -> Bool in
            guard let old = node.children.first(where: { $0.value === child })?.key else { return false }
            if PathOrder.sameBytes(old.string, wanted) { return false }
            node.children[old] = nil
            node.children[FileName(FileWrapper.uniqueKey(in: node.children, for: wanted))] = child
            node.directoryEditedSinceRead = true
            return true
        }
        if changed {
            invalidateContentHash()
            markEdited()
        }
    }

    /// Whether this wrapper is `other` or one of its ancestors.
    func isSelfOrAncestor(of other: FileWrapper) -> Bool {
        if other === self { return true }
        return other.parents.contains { isSelfOrAncestor(of: $0) }
    }

    /// Marks this node, and every directory above it, as edited since the last read or save
    /// (stopping at an ancestor already marked: its own ancestors are marked too).
    ///
    /// - Complexity: O(depth) the first time, O(1) when already marked.
    func markEdited() {
        let already = state.withLock { node -> Bool in
            defer { node.editedBelow = true }
            return node.editedBelow
        }
        guard !already else { return }
        for parent in parents { parent.markEdited() }
    }

    /// Forgets this node's hash and its ancestors'.
    ///
    /// Walks every path to the root rather than stopping at a node already without a
    /// hash: the manifest may have supplied a directory hash above an unhashed node.
    /// - Complexity: O(depth × parents per node), usually O(depth).
    func invalidateContentHash() {
        state.withLock { node in
            node.cachedHash = nil
            node.cachedChunks = nil
            node.cachedDescendantCount = nil
            node.generation &+= 1
        }
        invalidateAncestorHashes()
    }

    /// The number of entries below this directory, all depths (0 for other kinds): counted
    /// once, then cached until something below changes.
    ///
    /// - Complexity: O(directories edited since the last count) in memory; no disk access.
    var descendantCount: Int {
        if let cached = state.withLock({ $0.cachedDescendantCount }) { return cached }
        var count = 0
        for (_, child) in sortedChildren ?? [] { count += 1 + child.descendantCount }
        state.withLock { $0.cachedDescendantCount = count }
        return count
    }

    /// Forgets the hashes of the directories above this node (its own hash stays): what
    /// a change of the node's Merkle tag (the executable bit) or name needs.
    func invalidateAncestorHashes() {
        for parent in parents { parent.invalidateContentHash() }
    }
}
