import Glibc
import PackageCore
import Synchronization

/// Where a pull assembles file contents before the save engine puts them in DEST:
/// `.<DEST>.pkgtool-pull/` beside DEST (same file system, so nothing is copied twice across
/// devices), never inside it.
///
/// ```
/// lock                    an OFD lock: one pull into DEST at a time
/// journal                 one record per blob written and verified (resuming skips it):
///                         a `ChecksummedLog`
/// partial/<hash>-<size>   contents of several blobs being assembled, named by their XXH3
///                         and size
/// ready/<hash>-<size>     contents complete and checked against their XXH3; a content of
///                         one blob is written here directly as it arrives (its bytes
///                         hashed on the way in), and a resumed pull checks every ready
///                         file again before using it
/// blobs/<sha256>          single blobs checked against their SHA-256: the new pieces of a
///                         large file whose other pieces DEST holds (streamed to the engine)
/// ```
/// Contents are named by what they hold, not by where they go, so an interrupted pull
/// resumes whatever version the next pull fetches: what was downloaded and is still
/// needed is used, the rest is removed. DEST itself is touched only by the save engine,
/// after every content needed is ready and checked.
final class PullStaging: @unchecked Sendable {
    // @unchecked: the journal descriptor is written under `journalLock`; the rest is immutable.
    let path: String
    let root: SharedDescriptor
    let partial: SharedDescriptor
    let ready: SharedDescriptor
    let blobs: SharedDescriptor
    private let lockFile: SharedDescriptor
    private let journal: SharedDescriptor
    private let journalLock = Mutex(())
    /// Blobs already written, by content and offset (from an interrupted pull's journal).
    private(set) var done: Set<JournalRecord> = []

    struct JournalRecord: Hashable, Sendable {
        var content: FileKey
        var offset: Int64
        var digest: SHA256Digest
    }

    /// The journal's records (Specs/save.md, "Records that survive a crash"): each one
    /// `ChecksummedLog` record whose payload is content hash, size, offset, SHA-256.
    static let journalMagic: [UInt8] = Array("PKGPULJ".utf8) + [0]
    static let journalVersion: UInt32 = 1
    static let journalPayloadSize = 16 + 8 + 8 + 32

    /// The staging area of `destination`, created or reopened (and locked).
    /// - Throws: `localFailure` when another pull into the same DEST holds it.
    init(destination: String) throws {
        path = Self.path(of: destination)
        if try FileSystem.statusIfExists(path) == nil {
            try FileSystem.makeDirectory(path, permissions: 0o700)
        }
        root = SharedDescriptor(try FileDescriptor.openDirectory(path))
        for directory in ["partial", "ready", "blobs"] where try FileSystem.statusIfExists(directory, relativeTo: root.rawValue) == nil {
            try FileSystem.makeDirectory(directory, relativeTo: root.rawValue, permissions: 0o700)
        }
        lockFile = SharedDescriptor(
            try FileDescriptor.open("lock", relativeTo: root.rawValue, access: .readWrite, options: [.create], permissions: 0o600))
        guard try lockFile.descriptor.lock(exclusive: true, wait: false) else {
            throw RemoteError(.localFailure, "another pull into '\(destination)' is running (it holds \(path)/lock)")
        }
        partial = SharedDescriptor(try FileDescriptor.openDirectory("partial", relativeTo: root.rawValue))
        ready = SharedDescriptor(try FileDescriptor.openDirectory("ready", relativeTo: root.rawValue))
        blobs = SharedDescriptor(try FileDescriptor.openDirectory("blobs", relativeTo: root.rawValue))
        journal = SharedDescriptor(
            try FileDescriptor.open(
                "journal", relativeTo: root.rawValue, access: .readWrite, options: [.create, .append], permissions: 0o600))
        done = readJournal()
    }

    static func name(_ key: FileKey) -> String { "\(key.hash)-\(key.size)" }

    /// The staging area's path for `destination`: `.<DEST>.pkgtool-pull` beside it.
    static func path(of destination: String) -> String {
        let (parent, name) = split(destination)
        return PackageLayout.joined(parent, "." + name + ".pkgtool-pull")
    }

    /// `path`'s folder ("." when none) and last name, split on the byte "/" (`lastIndex(of:
    /// "/")` on the characters misses a "/" followed by a combining mark: "a/\u{301}b").
    static func split(_ path: String) -> (parent: String, name: String) {
        let path = RelativePath.trimmingTrailingSlashes(path)
        guard path.utf8.contains(UInt8(ascii: "/")) else { return (".", path) }
        let (parent, name) = RelativePath.splitLast(path)
        return (parent.isEmpty ? "/" : parent, name)
    }

    // MARK: Contents

    /// The XXH3 of each piece of `key` when it is ready (complete and checked), nil when it
    /// is not. A ready file that no longer hashes to its name (a crash lost its pages) is
    /// removed.
    func readyPieceHashes(_ key: FileKey, pieces: [Int], buffer: ChunkBuffer) -> [ContentHash]? {
        let name = Self.name(key)
        guard let file = try? FileDescriptor.open(name, relativeTo: ready.rawValue) else { return nil }
        if let (hash, pieceHashes) = try? Self.hash(file, size: key.size, pieces: pieces, buffer: buffer),
            hash == key.hash
        {
            return pieceHashes
        }
        try? FileSystem.remove(name, relativeTo: ready.rawValue)
        return nil
    }

    /// Opens (creating, sized) the partial file of `key`. A partial file that is new drops
    /// any journal records of an earlier one.
    func preparePartial(_ key: FileKey) throws {
        let name = Self.name(key)
        if let status = try FileSystem.statusIfExists(name, relativeTo: partial.rawValue), status.kind == .regular,
            status.size == key.size
        {
            return
        }
        try? FileSystem.remove(name, relativeTo: partial.rawValue)
        done = done.filter { $0.content != key }
        let file = try FileDescriptor.open(
            name, relativeTo: partial.rawValue, access: .writeOnly, options: [.create, .exclusive], permissions: 0o600,
            displayPath: path + "/partial/" + name)
        try file.truncate(to: key.size)
    }

    func openPartial(_ key: FileKey) throws -> FileDescriptor {
        let name = Self.name(key)
        return try FileDescriptor.open(
            name, relativeTo: partial.rawValue, access: .writeOnly, displayPath: path + "/partial/" + name)
    }

    /// Checks a partial file against its XXH3 and moves it to `ready`; a mismatch removes it
    /// (and its journal records, by the file's absence) and throws. Returns the XXH3 of each
    /// piece (the blobs' lengths, `pieces`), computed in the same pass.
    func finish(_ key: FileKey, pieces: [Int], buffer: ChunkBuffer) throws -> [ContentHash] {
        let name = Self.name(key)
        let file = try FileDescriptor.open(name, relativeTo: partial.rawValue, displayPath: path + "/partial/" + name)
        let (hash, pieceHashes) = try Self.hash(file, size: key.size, pieces: pieces, buffer: buffer)
        guard hash == key.hash else {
            try? FileSystem.remove(name, relativeTo: partial.rawValue)
            throw RemoteError(
                .verificationFailed,
                "assembled content \(key.hash) does not match its content hash (a blob held other bytes than the version says); DEST was not changed")
        }
        try FileSystem.rename(name, to: name, fromDirectory: partial.rawValue, toDirectory: ready.rawValue)
        return pieceHashes
    }

    /// The folder of ready contents, ending in "/": a ready content's path is this and its name.
    var readyDirectory: String { path + "/ready/" }

    /// Marks the moment every ready content has been checked: returns the change time of
    /// a `checked` file made anew now. A ready file changed later has a later change time
    /// (the same clock), and `PulledContents` then has the engine read and hash it rather
    /// than move it into place unread. Nothing per content is kept for that.
    func markChecked() throws -> Int64 {
        try? FileSystem.remove("checked", relativeTo: root.rawValue)
        let file = try FileDescriptor.open(
            "checked", relativeTo: root.rawValue, access: .writeOnly, options: [.create, .exclusive, .noFollow],
            permissions: 0o600, displayPath: path + "/checked")
        return try file.status().changeTime
    }

    /// Removes what no longer serves: contents `needed` refuses (and names no content gives),
    /// blobs not in `blobs` (a name is kept only when it has the very bytes of a kept digest). Returns the contents kept in `ready` and in `partial`, each
    /// sorted: what an interrupted pull left (a fresh pull then asks nothing of the others).
    @discardableResult
    func removeUnneeded(
        keepingContents needed: (FileKey) -> Bool, blobs keep: Set<SHA256Digest>
    ) -> (ready: [FileKey], partial: [FileKey]) {
        var kept: (ready: [FileKey], partial: [FileKey]) = ([], [])
        for (directory, holdsBlobs) in [(partial, false), (ready, false), (blobs, true)] {
            guard let names = try? DirectoryListing.names(in: directory.descriptor) else { continue }
            for name in names {
                if holdsBlobs {
                    if !Self.isKept(blobNamed: name, keep) { try? FileSystem.remove(name, relativeTo: directory.rawValue) }
                    continue
                }
                guard let key = Self.key(named: name), needed(key) else {
                    try? FileSystem.remove(name, relativeTo: directory.rawValue)
                    continue
                }
                if directory === ready { kept.ready.append(key) } else { kept.partial.append(key) }
            }
        }
        kept.ready.sort()
        kept.partial.sort()
        return kept
    }

    /// Creates (or empties) the ready file of `key`, a content of one blob written as its
    /// bytes arrive: it counts as ready once `PackRangeSink` checked them, and a resumed pull
    /// checks it again (`readyPieceHashes`), so a kill midway leaves nothing trusted.
    func openReadyForWriting(_ key: FileKey) throws -> FileDescriptor {
        let name = Self.name(key)
        return try FileDescriptor.open(
            name, relativeTo: ready.rawValue, access: .writeOnly, options: [.create, .truncate, .noFollow],
            permissions: 0o600, displayPath: readyDirectory + name)
    }

    /// Removes the ready file of `key` (one whose bytes were refused).
    func removeReady(_ key: FileKey) {
        try? FileSystem.remove(Self.name(key), relativeTo: ready.rawValue)
    }

    /// The content a staged file's name gives (`name(_:)`), nil for any other name.
    static func key(named name: String) -> FileKey? {
        guard let dash = name.utf8.firstIndex(of: UInt8(ascii: "-")), let hash = ContentHash(hex: name[..<dash]),
            let size = Int64(name[name.utf8.index(after: dash)...]), size >= 0
        else { return nil }
        let key = FileKey(hash, size)
        // Only the very name this pull would give it (no sign, no leading zero, lower case).
        return PathOrder.sameBytes(Self.name(key), name) ? key : nil
    }

    // MARK: Single blobs

    /// Whether `name`, read from `blobs/`, is the very name (`SHA256Digest.description`) of a
    /// digest in `keep`: compared as bytes, so no other spelling of it counts.
    static func isKept(blobNamed name: String, _ keep: Set<SHA256Digest>) -> Bool {
        guard let digest = SHA256Digest(hex: name), keep.contains(digest) else { return false }
        return PathOrder.sameBytes(digest.description, name)
    }

    func blobPath(_ digest: SHA256Digest) -> String { path + "/blobs/" + digest.description }

    /// Whether a blob of this length was downloaded and checked by an earlier pull.
    func hasBlob(_ digest: SHA256Digest, length: UInt32) -> Bool {
        (try? FileSystem.statusIfExists(digest.description, relativeTo: blobs.rawValue))??.size == Int64(length)
    }

    /// A new, empty file for a blob's bytes as they arrive (`commitBlob` names it once checked).
    func openBlobPart(_ digest: SHA256Digest) throws -> FileDescriptor {
        let name = digest.description + ".part"
        return try FileDescriptor.open(
            name, relativeTo: blobs.rawValue, access: .writeOnly, options: [.create, .truncate], permissions: 0o600,
            displayPath: path + "/blobs/" + name)
    }

    func commitBlob(_ digest: SHA256Digest) throws {
        try FileSystem.rename(
            digest.description + ".part", to: digest.description, fromDirectory: blobs.rawValue, toDirectory: blobs.rawValue)
    }

    /// Lets the next pull into DEST in: called when this one ends, however it ends (the
    /// descriptor itself may outlive it a moment, in a transfer thread's last references).
    func unlock() {
        lockFile.descriptor.unlock()
    }

    /// Removes the whole staging area (after the save, or when starting over).
    func remove() {
        try? FileSystem.removeTree(path)
    }

    // MARK: Journal

    /// Records that `digest`'s bytes are in `content` at `offset` (checked before writing).
    func recordDone(_ record: JournalRecord) {
        let bytes = Self.journalRecord(record)
        journalLock.withLock { _ in
            try? ChecksummedLog.append(bytes, to: journal.descriptor)
        }
    }

    /// The journal's bytes for `record`.
    static func journalRecord(_ record: JournalRecord) -> [UInt8] {
        var payload = ByteWriter(capacity: journalPayloadSize)
        payload.append(record.content.hash)
        payload.append(UInt64(record.content.size))
        payload.append(UInt64(record.offset))
        payload.append(contentsOf: record.digest.bytes)
        return ChecksummedLog.record(magic: journalMagic, version: journalVersion, payload: payload.bytes)
    }

    /// The records of the journal up to the first torn, damaged or foreign one (a journal
    /// of an earlier format reads as empty); what follows them is cut off, so that the
    /// records this pull appends are read by the next (the staging area's lock is held).
    private func readJournal() -> Set<JournalRecord> {
        var result = Set<JournalRecord>()
        let read = try? ChecksummedLog.readRecords(
            of: journal.descriptor, magic: Self.journalMagic, highestVersion: Self.journalVersion, limit: 1 << 30
        ) { version, payload in
            var reader = ByteReader(payload)
            guard version == Self.journalVersion, payload.count == Self.journalPayloadSize,
                let hash = try? reader.hash(), let size = (try? reader.read(UInt64.self)).flatMap({ Int64(exactly: $0) }),
                let position = (try? reader.read(UInt64.self)).flatMap({ Int64(exactly: $0) }),
                let digest = try? reader.bytes(32)
            else { return false }
            result.insert(JournalRecord(content: FileKey(hash, size), offset: position, digest: SHA256Digest(bytes: digest)))
            return true
        }
        if let read, read.accepted < read.size {
            try? journal.descriptor.truncate(to: read.accepted)
        }
        return result
    }

    /// XXH3 of the staged blob at `path`, checked first against its SHA-256 (a damaged one
    /// is removed, and the pull must be run again).
    static func hashBlob(_ path: String, digest: SHA256Digest, length: Int, buffer: ChunkBuffer) throws -> ContentHash {
        let file = try FileDescriptor.open(path)
        guard length <= buffer.count else { throw RemoteError(.verificationFailed, "the staged blob '\(path)' is too large") }
        let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<length])
        guard try file.readFully(into: bytes, at: 0) == length, SHA256Digest.of(UnsafeRawBufferPointer(bytes)) == digest else {
            try? FileSystem.remove(path)
            throw RemoteError(.verificationFailed, "the staged blob '\(path)' is damaged (it was removed): pull again")
        }
        return ContentHash.of(UnsafeRawBufferPointer(bytes))
    }

    /// XXH3 of a whole file and, in the same pass, of each of its `pieces` (lengths, in
    /// order; empty: none); a piece that does not fit `buffer`, or pieces that do not add up
    /// to `size`, give no piece hashes.
    static func hash(
        _ file: borrowing FileDescriptor, size: Int64, pieces: [Int] = [], buffer: ChunkBuffer
    ) throws -> (ContentHash, [ContentHash]) {
        let hasher = ContentHasher()
        let pieceHasher = ContentHasher()
        var pieceHashes: [ContentHash] = []
        let byPiece =
            !pieces.isEmpty && pieces.allSatisfy { $0 > 0 && $0 <= buffer.count }
            && pieces.reduce(Int64(0), { $0 + Int64($1) }) == size
        var offset: Int64 = 0
        var index = 0
        while offset < size {
            let wanted = byPiece ? pieces[index] : Int(min(Int64(buffer.count), size - offset))
            let count = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<wanted]), at: offset)
            guard count == wanted else { break }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer.bytes[..<count])
            hasher.update(bytes)
            if byPiece {
                pieceHasher.reset()
                pieceHasher.update(bytes)
                pieceHashes.append(pieceHasher.digest())
                index += 1
            }
            offset += Int64(count)
        }
        return (hasher.digest(), offset == size && byPiece ? pieceHashes : [])
    }
}
