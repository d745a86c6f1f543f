import PackageCore

/// A version a push stores: what its manifest says, its bytes, and the packs its blobs are in.
protocol StorableVersion {
    /// Its summary once stored under `id`.
    func summary(id: SHA256Digest) -> VersionSummary
    /// Its manifest's bytes.
    func encoded() -> [UInt8]
    /// Whether `bytes` decode, as a pull decodes them, to exactly this version.
    func isEncoded(as bytes: [UInt8], id: SHA256Digest) -> Bool
    /// The packs its blobs are in.
    func packNames() -> Set<SHA256Digest>
    /// Its entries as one array (a push that must rebase the version onto a prune).
    func manifest() -> VersionManifest
}

extension VersionManifest: StorableVersion {
    func packNames() -> Set<SHA256Digest> { Set(entries.lazy.flatMap { $0.blobs.lazy.map(\.pack) }) }
    func manifest() -> VersionManifest { self }
}

/// The version a push makes, before it is stored: every entry of the package's scan, each
/// regular file with the blobs just sent for it or those of the parent's same content.
///
/// Its entries are made one at a time, each time the manifest is encoded or checked, from
/// the scan's tree: never an array of them beside that tree (at a million entries each is
/// about 115 MB, and the two together were a push's peak).
struct PushedVersion: StorableVersion {
    var sequence: Int
    var time: Int64
    var parent: SHA256Digest?
    /// A merge's second parent; nil otherwise.
    var secondParent: SHA256Digest?
    /// The package as scanned: the version's tree.
    let snapshot: TreeSnapshot
    /// The entries of `snapshot` whose blobs were sent (ascending), and those blobs in turn.
    let sentEntries: [Int32]
    let sent: BlobUploader.Sent
    /// The parent's contents: the blobs of every other regular file.
    let parentContents: ParentContents

    var header: VersionManifest.Header {
        var size: Int64 = 0
        for entry in snapshot.entries where entry.kind == .regular { size += entry.size }
        return VersionManifest.Header(
            sequence: sequence, time: time, parent: parent, secondParent: secondParent, rootHash: snapshot.rootHash,
            size: size, entryCount: snapshot.entries.count)
    }

    var entries: Entries { Entries(version: self) }

    func summary(id: SHA256Digest) -> VersionSummary { header.summary(id: id) }

    func encoded() -> [UInt8] { VersionManifest.encoded(header, entries: entries) }

    func isEncoded(as bytes: [UInt8], id: SHA256Digest) -> Bool {
        // The entries hash to the scan's root (directories' hashes recomputed, as a pull does).
        let root = VersionManifest.rootHash(count: snapshot.entries.count) { entry(at: $0, blobs: []) }
        return root == snapshot.rootHash
            && VersionManifest.decodesExactly(bytes, id: id, to: summary(id: id), entries: entries)
    }

    func packNames() -> Set<SHA256Digest> { Set(entries.lazy.flatMap { $0.blobs.lazy.map(\.pack) }) }

    func manifest() -> VersionManifest {
        VersionManifest(
            sequence: sequence, time: time, parent: parent, secondParent: secondParent, rootHash: snapshot.rootHash,
            entries: Array(entries))
    }

    /// Entry `index` of the scan as the version records it, with `blobs`.
    fileprivate func entry(at index: Int, blobs: ArraySlice<BlobLocation>) -> RemoteEntry {
        let entry = snapshot.entries[index]
        return RemoteEntry(
            entryPath: entry.entryPath, kind: entry.kind, permissions: entry.permissions & 0o7777,
            size: entry.kind == .directory ? 0 : entry.size, modificationTime: entry.modificationTime,
            contentHash: entry.kind == .directory ? ContentHash(high: 0, low: 0) : entry.hash,
            linkTarget: entry.linkTarget, blobs: blobs)
    }

    /// The version's entries in depth-first order, made as they are walked.
    struct Entries: Sequence {
        fileprivate let version: PushedVersion

        func makeIterator() -> Iterator { Iterator(version: version) }

        struct Iterator: IteratorProtocol {
            fileprivate let version: PushedVersion
            private var index = 0
            /// The first of `sentEntries` not reached yet.
            private var nextSent = 0

            fileprivate init(version: PushedVersion) { self.version = version }

            mutating func next() -> RemoteEntry? {
                guard index < version.snapshot.entries.count else { return nil }
                defer { index += 1 }
                let scanned = version.snapshot.entries[index]
                var blobs: ArraySlice<BlobLocation> = []
                if nextSent < version.sentEntries.count && Int(version.sentEntries[nextSent]) == index {
                    blobs = version.sent[nextSent]
                    nextSent += 1
                } else if scanned.kind == .regular && scanned.size > 0 {
                    // The upload sent every content the parent lacks: the parent holds this one.
                    blobs = version.parentContents.blobs(of: FileKey(scanned.hash, scanned.size))!
                }
                return version.entry(at: index, blobs: blobs)
            }
        }
    }
}
