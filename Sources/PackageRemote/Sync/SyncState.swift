import PackageCore

/// What a package was last pushed as or pulled from, as the package itself carries it in
/// `.pkgtool/sync` (Specs/remote.md, "Local state"): the remote, and the version it holds —
/// the base a push must find at the remote's head, and a pull must not go back from.
///
/// A pull commits it with the save that writes the version (`SaveOptions.syncRecord`), so
/// a package is never left holding one version while naming another; a push, which does
/// not change the package, replaces it afterwards (`SyncRecordFile.replace`). It travels
/// with the package: moved, renamed or copied with `cp -a`, a package keeps its base.
///
/// The file is untrusted input (a package can come from anywhere): `decode` accepts exactly
/// the lines `encoded` writes, each checked, at most `SyncRecordFile.limit` bytes.
struct SyncState: Sendable, Equatable {
    /// The remote, as its `s3://` URL names it (bucket and prefix).
    var location: RemoteLocation
    /// The endpoint, when it was given explicitly (`--endpoint`); nil: the environment's.
    var endpoint: String?
    /// The version the package was last pushed as or pulled from.
    var version: SHA256Digest
    /// That version's number.
    var sequence: Int
    /// That version's root hash: what the package held then.
    var rootHash: ContentHash

    static let magicLine = "pkgtool-sync 1"

    init(location: RemoteLocation, endpoint: String?, version: VersionSummary) {
        self.location = location
        self.endpoint = endpoint
        self.version = version.id
        sequence = version.sequence
        rootHash = version.rootHash
    }

    init(location: RemoteLocation, endpoint: String?, version: SHA256Digest, sequence: Int, rootHash: ContentHash) {
        self.location = location
        self.endpoint = endpoint
        self.version = version
        self.sequence = sequence
        self.rootHash = rootHash
    }

    /// Whether the record is about the remote at `location` reached through `endpoint`
    /// (nil: not given explicitly). The URL is the remote's identity; endpoints differ only
    /// when both were given explicitly and are not the same.
    func names(_ location: RemoteLocation, endpoint: String?) -> Bool {
        guard PathOrder.sameBytes(self.location.bucket, location.bucket),
            PathOrder.sameBytes(self.location.prefix, location.prefix)
        else { return false }
        guard let mine = self.endpoint, let theirs = endpoint else { return true }
        return PathOrder.sameBytes(mine, theirs)
    }

    /// The record's lines, each ended by a newline.
    func encoded() -> [UInt8] {
        var text = Self.magicLine + "\n"
        text += "remote \(location)\n"
        if let endpoint { text += "endpoint \(endpoint)\n" }
        text += "version \(version)\n"
        text += "sequence \(sequence)\n"
        text += "root \(rootHash)\n"
        return Array(text.utf8)
    }

    /// Decodes a record, or says in a few words why the bytes are none.
    static func decode(_ bytes: [UInt8]) -> Result<SyncState, SyncStateRefusal> {
        func refuse(_ why: String) -> Result<SyncState, SyncStateRefusal> { .failure(SyncStateRefusal(reason: why)) }
        guard bytes.count <= SyncRecordFile.limit else { return refuse("it is too large") }
        guard let text = String(validating: bytes, as: UTF8.self) else { return refuse("it is not UTF-8") }
        guard text.utf8.last == UInt8(ascii: "\n") else { return refuse("it does not end with a newline") }
        var lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }[...]
        guard let first = lines.popFirst(), PathOrder.sameBytes(first, magicLine) else { return refuse("it is not a pkgtool sync record of format 1") }
        func field(_ name: String) -> String? {
            guard let line = lines.first, PathOrder.hasBytePrefix(line, name + " ") else { return nil }
            lines.removeFirst()
            return PathOrder.droppingBytes(name.utf8.count + 1, from: line)
        }
        guard let url = field("remote"), let location = try? RemoteLocation(parsing: url),
            PathOrder.sameBytes(location.description, url)
        else { return refuse("its remote is not an s3:// URL") }
        var endpoint: String?
        if let given = field("endpoint") {
            guard let normalised = try? S3Configuration.normalisedEndpoint(given), PathOrder.sameBytes(normalised, given),
                !given.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
            else { return refuse("its endpoint is not an http(s) URL") }
            endpoint = given
        }
        guard let versionText = field("version"), let version = SHA256Digest(hex: versionText),
            PathOrder.sameBytes(version.description, versionText)
        else { return refuse("its version is not 64 lowercase hexadecimal digits") }
        guard let sequenceText = field("sequence"), (1...18).contains(sequenceText.utf8.count),
            sequenceText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            sequenceText.utf8.first != UInt8(ascii: "0"), let sequence = Int(sequenceText)
        else { return refuse("its sequence is not a version number") }
        guard let rootText = field("root"), let rootHash = ContentHash(hex: rootText),
            PathOrder.sameBytes(rootHash.description, rootText)
        else { return refuse("its root is not 32 lowercase hexadecimal digits") }
        guard lines.isEmpty else { return refuse("it has unknown lines") }
        return .success(
            SyncState(location: location, endpoint: endpoint, version: version, sequence: sequence, rootHash: rootHash))
    }

    /// The record the package at `packagePath` carries; nil when it has none or the one it
    /// has cannot be used (`note` then hears why, in one line).
    static func read(packagePath: String, note: (String) -> Void) -> SyncState? {
        switch SyncRecordFile.read(packagePath: packagePath) {
        case .absent:
            return nil
        case .unusable(let why):
            note("ignored the sync record: \(why)")
            return nil
        case .bytes(let bytes):
            switch decode(bytes) {
            case .success(let state): return state
            case .failure(let refusal):
                note(
                    "ignored the sync record '\(PackageLayout.metadataDirectory(of: packagePath))/\(PackageLayout.syncRecordFileName)': \(refusal.reason)")
                return nil
            }
        }
    }
}

/// Why bytes are not a sync record.
struct SyncStateRefusal: Error, Equatable {
    var reason: String
}

/// What a push or pull knows of a package's last sync with the remote at hand.
struct SyncBase: Sendable, Equatable {
    var version: SHA256Digest
    /// Nil for a record of the old per-machine cache, which did not keep it.
    var sequence: Int?
    var rootHash: ContentHash
}

/// A package's sync state as a push or pull reads it: its own record (about any remote),
/// the one of the old per-machine cache when it has none, and the record's raw contents
/// for `SyncRecordFile.replace`.
struct PackageSyncStatus {
    /// The package's own record, whatever remote it names.
    var own: SyncState?
    /// What `.pkgtool/sync` held when read.
    var contents: SyncRecordFile.Contents
    /// The base for the remote at hand: the package's own record when it names this
    /// remote; else, only when the package has no record at all, the old cache's (migration).
    var base: SyncBase?
    /// The root hash the package held when last synced with any remote: a package whose
    /// root differs has changes never pushed.
    var syncedRoot: ContentHash? { own?.rootHash ?? base?.rootHash }

    /// Reads the sync state of the package at `packagePath` for `store`.
    static func read(packagePath: String, store: RemoteStore, note: (String) -> Void) -> PackageSyncStatus {
        let contents = SyncRecordFile.read(packagePath: packagePath)
        let own = SyncState.read(packagePath: packagePath, note: note)
        var base: SyncBase?
        if let own {
            if own.names(store.location, endpoint: store.explicitEndpoint) {
                base = SyncBase(version: own.version, sequence: own.sequence, rootHash: own.rootHash)
            }
        } else if case .absent = contents, let legacy = store.cache.syncRecord(forPackage: PackagePaths.realPath(packagePath) ?? packagePath) {
            base = SyncBase(version: legacy.version, sequence: nil, rootHash: legacy.rootHash)
        }
        return PackageSyncStatus(own: own, contents: contents, base: base)
    }
}
