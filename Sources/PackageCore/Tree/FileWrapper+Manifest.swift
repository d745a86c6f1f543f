/// A tree read from a package takes what the package's manifest knows: the hashes of the
/// files whose stat data still match (so that hashing the tree reads nothing), and the
/// manifest's head (so that the next save appends a delta without reloading the records).
extension FileWrapper {
    /// Called at the end of `init(url:)` for a directory. Silent when there is no sound
    /// manifest: the tree then simply hashes its files when asked.
    ///
    /// - Complexity: one manifest load, then a merge walk of the tree and the records: O(n).
    func adoptManifest(packagePath: String) {
        guard let manifest = (try? PackageManifest.load(packagePath: packagePath)) ?? nil else { return }
        var cursor = 0
        prefillHashes(prefix: "", manifest: manifest, cursor: &cursor)
        guard let identity = try? TreePackageState.Identity.current(packagePath: packagePath, head: manifest.head)
        else { return }
        let packageState = TreePackageState(packagePath: packagePath, head: manifest.head, identity: identity)
        state.withLock { $0.packageState = packageState }
    }

    /// Walks this directory's children in byte order (the manifest's depth-first order),
    /// moving `cursor` through the records alongside.
    private func prefillHashes(prefix: String, manifest: PackageManifest, cursor: inout Int) {
        let entries = manifest.entries
        for (name, child) in sortedChildren ?? [] {
            let path = prefix.isEmpty ? name.string : prefix + "/" + name.string
            while cursor < entries.count && PathOrder.pathLess(entries[cursor].path, path) { cursor += 1 }
            guard cursor < entries.count, PathOrder.sameBytes(entries[cursor].path, path) else {
                if child.isDirectory { child.prefillHashes(prefix: path, manifest: manifest, cursor: &cursor) }
                continue
            }
            let index = cursor
            cursor += 1
            if let record = child.backingFile, let hash = manifest.cachedHash(at: index, status: record.status) {
                let chunks = entries[index].chunks
                child.state.withLock { node in
                    if node.cachedHash == nil {
                        node.cachedHash = hash
                        node.cachedChunks = chunks
                    }
                }
            }
            if child.isDirectory { child.prefillHashes(prefix: path, manifest: manifest, cursor: &cursor) }
        }
    }

    /// The package state attached to this root, if any.
    var packageState: TreePackageState? {
        get { state.withLock { $0.packageState } }
        set { state.withLock { $0.packageState = newValue } }
    }

    /// Whether this node (or something below it) was edited since it was read or saved.
    var isEditedBelow: Bool { state.withLock { $0.editedBelow } }
}
