@testable import PackageCore

/// Small helpers for the merge tests: trees from literals, edits that keep them assembled.
enum MergeFixtures {
    static func file(_ path: String, _ text: String, permissions: UInt32 = 0o644) -> SnapshotEntry {
        SnapshotEntry(
            path: path, kind: .regular, permissions: permissions, size: Int64(text.utf8.count),
            hash: ContentHash.of(Array(text.utf8)))
    }

    static func directory(_ path: String, permissions: UInt32 = 0o755) -> SnapshotEntry {
        SnapshotEntry(path: path, kind: .directory, permissions: permissions, size: 0, hash: .empty)
    }

    static func link(_ path: String, _ target: String) -> SnapshotEntry {
        SnapshotEntry(
            path: path, kind: .symbolicLink, permissions: 0o777, size: Int64(target.utf8.count),
            hash: ContentHash.of(Array(target.utf8)), linkTarget: target)
    }

    static func tree(_ entries: [SnapshotEntry]) -> TreeSnapshot { TreeSnapshot.assemble(entries) }

    /// `tree` with the entries at and beneath `path` removed (byte-exact).
    static func removing(_ path: String, from tree: TreeSnapshot) -> TreeSnapshot {
        TreeSnapshot.assemble(tree.entries.filter { !PathOrder.isSelfOrDescendant($0.path, of: path) })
    }

    /// `tree` with `entries` put in (replacing an entry at the same path, byte-exact).
    static func putting(_ entries: [SnapshotEntry], into tree: TreeSnapshot) -> TreeSnapshot {
        var kept = tree.entries.filter { old in !entries.contains { PathOrder.sameBytes($0.path, old.path) } }
        kept += entries
        return TreeSnapshot.assemble(kept)
    }

    /// `tree` with the permission bits of `path` set.
    static func chmod(_ path: String, _ permissions: UInt32, in tree: TreeSnapshot) -> TreeSnapshot {
        var entries = tree.entries
        let index = tree.index(of: path)!
        entries[index].permissions = permissions
        return TreeSnapshot.assemble(entries)
    }

    static func hash(_ text: String) -> ContentHash { ContentHash.of(Array(text.utf8)) }
}

extension TreeMerge {
    /// "path source" for every merged entry: the shape of a merge in one comparable value.
    var lines: [String] {
        zip(tree.entries, sources).map { "\($0.path) \($1)" }
    }

    /// The merged entry at a path written in a test.
    subscript(_ path: String) -> SnapshotEntry? { entry(at: RelativePath(stringLiteral: path)) }
}
