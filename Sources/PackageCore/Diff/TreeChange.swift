/// One difference between two snapshots, in git's name-status terms.
public struct TreeChange: Sendable, Equatable {
    public enum Status: String, Sendable, Equatable, CaseIterable {
        case added = "A"
        case deleted = "D"
        /// Same path and kind; content or executable bit changed.
        case modified = "M"
        /// Identical content that left one path and appeared at another (unique on each side).
        case renamed = "R"
        /// Same path, different kind (file, directory, symbolic link).
        case typeChanged = "T"
    }

    public var status: Status
    /// The path on the new side (the old side's for deletions).
    public var path: String
    /// The old path of a rename.
    public var oldPath: String?
    public var oldEntry: SnapshotEntry?
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
