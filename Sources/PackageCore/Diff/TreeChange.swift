/// One difference between two snapshots, in git's name-status terms.
public struct TreeChange: Sendable, Equatable {
    /// The kind of difference, with git's name-status letter as its raw value.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// A path that exists only on the new side.
        case added = "A"
        /// A path that exists only on the old side.
        case deleted = "D"
        /// Same path and kind; content or executable bit changed.
        case modified = "M"
        /// Identical content that left one path and appeared at another (unique on each side).
        case renamed = "R"
        /// Same path, different kind (file, directory, symbolic link).
        case typeChanged = "T"
    }

    /// What kind of difference this is.
    public var status: Status
    /// The path on the new side (the old side's for deletions).
    public var path: String
    /// The old path of a rename.
    public var oldPath: String?
    /// The entry on the old side (nil for an addition).
    public var oldEntry: SnapshotEntry?
    /// The entry on the new side (nil for a deletion).
    public var newEntry: SnapshotEntry?

    /// For modifications: whether the bytes changed (as opposed to the executable bit only).
    public var contentChanged: Bool {
        guard let oldEntry, let newEntry else { return true }
        return oldEntry.hash != newEntry.hash
    }

    /// For modifications: whether the executable bit changed.
    public var modeChanged: Bool {
        guard let oldEntry, let newEntry else { return false }
        return oldEntry.tag != newEntry.tag
    }

    /// `A\tpath`, `R\told\tnew`…: git's `--name-status` line.
    public var nameStatusLine: String {
        if let oldPath { return "\(status.rawValue)\t\(oldPath)\t\(path)" }
        return "\(status.rawValue)\t\(path)"
    }
}

extension TreeChange: CustomStringConvertible {
    /// What a person reads: `modified pages/3.txt`, `renamed media/a.png -> media/b.png`,
    /// `added pages/4.txt (12 bytes)`; without inodes, devices or hashes.
    public var description: String {
        let words: String
        switch status {
        case .added: words = "added"
        case .deleted: words = "deleted"
        case .modified: words = contentChanged ? "modified" : "mode changed"
        case .renamed: words = "renamed"
        case .typeChanged: words = "type changed"
        }
        let subject = oldPath.map { "\($0) -> \(path)" } ?? path
        guard status == .added, let entry = newEntry, entry.kind == .regular else { return "\(words) \(subject)" }
        return "\(words) \(subject) (\(entry.size) byte\(entry.size == 1 ? "" : "s"))"
    }
}
