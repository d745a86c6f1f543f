import PackageCore

/// How a push, pull, log or diff reaches a remote and runs.
public struct RemoteOptions: Sendable {
    /// Endpoint, region, credentials and transfer settings.
    public var configuration: S3Configuration
    /// This machine's cache of remote state (`LocalCache`): manifests, packs of interrupted
    /// pushes, the version each package was last synced with.
    public var cacheDirectory: String
    /// How files are cut into blobs: PackageCore's content-defined chunks (Specs/remote.md).
    package var chunking = Chunking()
    /// Bytes of blobs a pack holds at most (8 MiB; a single larger blob gets a pack of its
    /// own): one PUT each. Packs are streamed from the package's files, never held in
    /// memory, so their size costs no memory.
    public var packSize: Int
    /// Threads reading and hashing files for a push (each with one chunk buffer).
    public var readers: Int
    /// Threads scanning and hashing the local package.
    public var workers: Int
    /// Cancels the operation from another thread (transfers abort at once).
    public var cancellation: TransferCancellation?
    /// The endpoint when it was given explicitly (`--endpoint`), not taken from the
    /// environment: a package's sync record remembers it with the remote's URL. Nil by default.
    public var explicitEndpoint: String?
    /// The app's merge of the files it knows how to combine, for `sync`: where both devices
    /// changed such a file, the merged bytes are saved and pushed instead of a conflict
    /// version (Specs/remote.md, "Merging"). Nil: file by file.
    public var contentMerge: ContentMerge?
    /// What a push leaves out of the package (`pkgtool push --exclude`): a pushed version
    /// lacks the entries these name. Only a push's view of the package: a pull or a sync's
    /// merge compares and writes the package whole (Specs/cli.md, Conventions, "Exclusions"). None by default.
    public var exclusions: PathExclusions = .none

    /// Options on `configuration`; `cacheDirectory` nil means `$PKGTOOL_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/pkgtool`, else `~/.cache/pkgtool`.
    public init(
        configuration: S3Configuration, cacheDirectory: String? = nil,
        packSize: Int = 8 << 20, readers: Int = 2, workers: Int = 2, cancellation: TransferCancellation? = nil
    ) {
        self.configuration = configuration
        self.cacheDirectory = cacheDirectory ?? LocalCache.defaultRoot(S3Configuration.currentEnvironment())
        self.packSize = max(packSize, 1)
        self.readers = max(1, readers)
        self.workers = max(1, workers)
        self.cancellation = cancellation
    }

    /// Options from the environment and the AWS shared configuration files
    /// (`S3Configuration.fromEnvironment`).
    /// - Parameters:
    ///   - endpoint: an endpoint that overrides the configured one (`--endpoint`).
    ///   - profile: the AWS profile to read, overriding `AWS_PROFILE` (`--profile`).
    public static func fromEnvironment(endpoint: String? = nil, profile: String? = nil) throws(RemoteError)
        -> RemoteOptions
    {
        var options = RemoteOptions(
            configuration: try S3Configuration.fromEnvironment(endpoint: endpoint, profile: profile))
        if endpoint != nil { options.explicitEndpoint = options.configuration.endpoint }
        return options
    }
}
