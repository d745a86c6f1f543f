import PackageCore

/// Where a pull found each content DEST lacks at its path, asked one content at a time by
/// `RemoteVersionSource`: DEST's own files at other paths and streams of DEST's pieces as
/// origins; the rest assembled in the staging area, each named by its content, looked at
/// when the engine asks for it (a pull of a million small files keeps nothing of each).
struct PulledContents: Sendable {
    /// Origins given outright: DEST's files at other paths, streams, bytes in memory.
    var origins: [FileKey: ContentOrigin] = [:]
    /// The staging area's folder of assembled contents, ending in "/"; a content's file is
    /// named by `PullStaging.name(_:)`.
    let readyDirectory: String
    /// Contents several paths take: copied to each (a staged file moves into place once).
    let shared: Set<FileKey>
    /// The change time (the file system's clock) by which every assembled content had been
    /// checked against its XXH3 (`PullStaging.markChecked`); `Int64.min` before.
    var checkedBefore = Int64.min
    /// The chunk lists of large contents (their pieces on the remote, with the XXH3 of each).
    var chunkLists: [FileKey: ChunkList] = [:]

    init(readyDirectory: String, shared: Set<FileKey> = []) {
        self.readyDirectory = readyDirectory
        self.shared = shared
    }

    /// Where `key`'s bytes are, nil when the pull did not gather it.
    ///
    /// An assembled content is *adopted* — moved into place unread — only when its file
    /// has not changed since it was checked (its change time is not past `checkedBefore`)
    /// and no other path takes it; otherwise the engine copies it and hashes the copy
    /// (`.file`), refusing bytes that are not the content's.
    func origin(_ key: FileKey) -> ContentOrigin? {
        if let origin = origins[key] { return origin }
        let path = readyDirectory + PullStaging.name(key)
        guard let status = try? FileSystem.statusIfExists(path), status.kind == .regular, status.size == key.size
        else { return nil }
        guard status.changeTime <= checkedBefore, !shared.contains(key) else { return .file(path: path, seen: status) }
        return .adopt(path: path, verified: status)
    }
}
