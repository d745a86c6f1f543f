@testable import PackageCore

/// Snapshots written as lists of (path, kind, content) for unit tests of the differ and the
/// plan: directory hashes and descendant counts computed as the scanner would.
enum Snapshots {
    enum Node {
        case file(String, executable: Bool = false)
        case directory
        case link(String)
    }

    static func make(_ nodes: [(String, Node)]) -> TreeSnapshot {
        var entries: [SnapshotEntry] = nodes.map { path, node in
            switch node {
            case .file(let text, let executable):
                return SnapshotEntry(
                    path: path, kind: .regular, permissions: executable ? 0o755 : 0o644, size: Int64(text.utf8.count),
                    hash: ContentHash.of(Array(text.utf8)))
            case .directory:
                return SnapshotEntry(path: path, kind: .directory, permissions: 0o755, size: 0, hash: .empty)
            case .link(let target):
                return SnapshotEntry(
                    path: path, kind: .symbolicLink, permissions: 0o777, size: Int64(target.utf8.count),
                    hash: ContentHash.of(Array(target.utf8)), linkTarget: target)
            }
        }
        entries.sort { PathOrder.pathLess($0.path, $1.path) }
        entries = PackageManifest.withDescendantCounts(entries)
        // Merkle hashes, deepest directories first.
        for index in entries.indices.reversed() where entries[index].kind == .directory {
            var builder = TreeHashBuilder()
            var child = index + 1
            while child < index + entries[index].subtreeSpan {
                builder.add(name: String(entries[child].name), tag: entries[child].tag, hash: entries[child].hash)
                child += entries[child].subtreeSpan
            }
            entries[index].hash = builder.finish()
        }
        var root = TreeHashBuilder()
        var top = 0
        while top < entries.count {
            root.add(name: String(entries[top].name), tag: entries[top].tag, hash: entries[top].hash)
            top += entries[top].subtreeSpan
        }
        return TreeSnapshot(entries: entries, rootHash: root.finish())
    }
}
