import PackageCore

/// What DEST can give the contents a pull must provide (`WantedFiles`): which of them it
/// holds at another path (moved or copied files), and how many bytes the others add to
/// its file system — what `PullOperation.requireRoom` weighs before anything is fetched.
struct ContentsNeeded {
    /// Wanted contents DEST holds at another path: that entry's index in DEST's tree.
    private(set) var localByContent: [FileKey: Int] = [:]
    /// The bytes the wanted contents add: each one's size, less the size of the file it
    /// replaces at its path (a large file changed in place needs room for its growth only;
    /// which of its pieces changed is known later), unless DEST holds the content itself
    /// elsewhere. Saturates at `Int64.max`: a version may claim any sizes.
    private(set) var bytesAdded: Int64 = 0

    init(_ wanted: WantedFiles) {
        if let current = wanted.current, !wanted.files.isEmpty {
            for (position, entry) in current.entries.enumerated() where entry.kind == .regular {
                let key = FileKey(entry.hash, entry.size)
                if wanted.position(of: key) != nil { localByContent[key] = position }
            }
        }
        for file in wanted.files {
            var replaced: Int64 = 0
            if file.old >= 0, localByContent[file.key] == nil, let current = wanted.current {
                replaced = current.entries[Int(file.old)].size
            }
            let (sum, overflow) = bytesAdded.addingReportingOverflow(max(0, file.key.size - replaced))
            bytesAdded = overflow ? Int64.max : sum
        }
    }
}
