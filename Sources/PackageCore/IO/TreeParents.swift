/// The folders of a tree being built (a save's staging tree), opened by path beneath the
/// tree's root and through no symbolic link (`openat2` with `RESOLVE_BENEATH |
/// RESOLVE_NO_SYMLINKS`).
///
/// Every entry a save creates goes through here, so that it lands in the folder its path
/// names and nowhere else: never through a link an earlier entry made, whatever a source,
/// a package's manifest or a remote's version claims — even should a decoder let a bad
/// tree through. The last folder stays open: entries arrive depth-first, so siblings share
/// one `openat2`.
///
/// One per building thread.
package final class TreeParents {
    private let root: Int32
    private let display: (String) -> String
    private var openPath = ""
    private var open: SharedDescriptor?

    /// - Parameters:
    ///   - root: the tree's root, open; it must outlive this value.
    ///   - display: the path errors name for a relative path (the package's, say).
    package init(root: Int32, display: @escaping (String) -> String) {
        self.root = root
        self.display = display
    }

    /// The descriptor of the folder holding `path` and the entry's own name. The
    /// descriptor is valid until the next call.
    ///
    /// - Throws: `FileSystemError` naming the folder: ELOOP when a symbolic link stands
    ///   where the path has a folder, ENOTDIR when a file does, ENOENT when it is missing.
    package func locate(_ path: String) throws(FileSystemError) -> (directory: Int32, name: String) {
        (try directory(RelativePath.parent(of: path)), RelativePath.lastComponent(of: path))
    }

    /// Closes the folder kept open when it is `path` or lies beneath it: to be called once
    /// `path` was removed, so that a folder made again at that path is opened afresh.
    package func forget(_ path: String) {
        if open != nil, PathOrder.isSelfOrDescendant(openPath, of: path) { open = nil }
    }

    /// The descriptor of the folder `folder` of the tree ("" is the root), valid until the
    /// next call.
    package func directory(_ folder: String) throws(FileSystemError) -> Int32 {
        if folder.isEmpty { return root }
        if let open, PathOrder.sameBytes(folder, openPath) { return open.rawValue }
        open = nil
        do {
            let descriptor = try FileDescriptor.openWithoutSymlinks(
                folder, relativeTo: root, options: [.directory], beneath: true, displayPath: display(folder))
            open = SharedDescriptor(descriptor)
        } catch {
            var explained = error
            if error.errno == .tooManySymbolicLinks {
                explained.reason = "a symbolic link stands where the tree has a folder; it is never followed"
            }
            throw explained
        }
        openPath = folder
        return open!.rawValue
    }
}
