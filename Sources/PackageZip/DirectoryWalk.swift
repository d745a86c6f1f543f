import PackageCore

/// Descriptors of the directories along one path of a tree being extracted, so that each
/// directory is made through its parent's descriptor, and later finished (mode, time,
/// fsync) through its own, instead of the kernel walking every component from the root
/// for every directory (issue 17: 2,047 nested directories).
///
/// Directories are visited in preorder (`PathTree.directoriesInPreorder`): `descriptor(of:)`
/// with a directory's parent leaves every deeper directory of the path, then `enter` adds
/// the directory. Leaving calls `leave` with the directory's own descriptor: with the
/// parents still open and unfinished, a directory that ends with mode 0000 is finished
/// after everything beneath it.
///
/// Not every descriptor of a deep path stays open (a 2,047-deep tree would pass the usual
/// 1,024-descriptor limit): the first 64 levels and every 32nd below them do. A closed one
/// is reopened from the nearest open ancestor, at most 31 components away.
///
/// Every open is `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` with `O_DIRECTORY`.
final class DirectoryWalk {
    private let tree: PathTree
    private let root: Int32
    private let displayRoot: String
    private let leave: ((Int32, borrowing FileDescriptor) throws -> Void)?
    private var path: [(node: Int32, handle: SharedDescriptor?)] = []

    /// Levels of the path that keep their descriptor: the first `alwaysKept`, then every
    /// `interval`-th.
    static let alwaysKept = 64
    static let interval = 32

    /// - Parameter leave: called once per directory as the walk leaves it, with its
    ///   descriptor, deepest first; nil to only make directories.
    init(
        tree: PathTree, root: borrowing FileDescriptor, displayRoot: String,
        leave: ((Int32, borrowing FileDescriptor) throws -> Void)? = nil
    ) {
        self.tree = tree
        self.root = root.rawValue
        self.displayRoot = displayRoot
        self.leave = leave
    }

    /// The path errors name for `node`.
    func shown(_ node: Int32) -> String { displayRoot + "/" + tree.path(of: node).string }

    /// Leaves the directories of the path below `node` (which must be on the path, or the
    /// root) and returns `node`'s descriptor, opening it when it was not kept.
    func descriptor(of node: Int32) throws -> Int32 {
        while let last = path.last, last.node != node { try leaveLast() }
        if path.isEmpty {
            assert(node == PathTree.root, "directories must come in preorder")
            return root
        }
        return try openLast()
    }

    /// Adds `node`, a child of the last directory of the path (or of the root).
    func enter(_ node: Int32) {
        path.append((node, nil))
    }

    /// Leaves every directory of the path, deepest first.
    func finish() throws {
        while !path.isEmpty { try leaveLast() }
    }

    private func leaveLast() throws {
        if let leave {
            _ = try openLast()
            let last = path[path.count - 1]
            try leave(last.node, last.handle!.descriptor)
        }
        path.removeLast()
    }

    /// Opens the last directory of the path if it is not open, and closes the one above it
    /// unless that level is kept.
    private func openLast() throws -> Int32 {
        let level = path.count - 1
        if let handle = path[level].handle { return handle.rawValue }
        var base = level - 1
        while base >= 0 && path[base].handle == nil { base -= 1 }
        let baseDescriptor = base >= 0 ? path[base].handle!.rawValue : root
        let node = path[level].node
        let relative =
            base == level - 1 ? tree.name(of: node) : tree.path(of: node, below: base >= 0 ? path[base].node : PathTree.root)
        do {
            let handle = try FileDescriptor.openWithoutSymlinks(
                relative, relativeTo: baseDescriptor, options: [.directory], beneath: true, displayPath: relative)
            path[level].handle = SharedDescriptor(handle)
        } catch {
            var named = error
            named.path = shown(node)
            throw named
        }
        if level >= 1 && !Self.keeps(level: level - 1) { path[level - 1].handle = nil }
        return path[level].handle!.rawValue
    }

    private static func keeps(level: Int) -> Bool { level < alwaysKept || level % interval == 0 }
}
