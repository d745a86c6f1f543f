/// A package inside a `PackageScope`: locked as the scope says, an interrupted save
/// recovered. Valid only while the scope's body runs.
public struct OpenPackage: Sendable {
    /// Where the package is: its one canonical path, whatever spelling the scope was given.
    public let location: PackageLocation
    /// How the scope holds it.
    public let access: PackageScope.Access
    /// What recovery did on entering the scope (nothing when nested in another scope).
    package let recovery: PackageRecovery.Report
    /// Why a shared scope reads the package as it stands: recovery could not finish, or
    /// the shared lock could not be taken. Nil when the package is settled, and always for
    /// an exclusive scope, which throws instead.
    public let problem: (any Error)?

    init(
        location: PackageLocation, access: PackageScope.Access, recovery: PackageRecovery.Report = PackageRecovery.Report(),
        problem: (any Error)? = nil
    ) {
        self.location = location
        self.access = access
        self.recovery = recovery
        self.problem = problem
    }

    /// The package's canonical path.
    public var path: String { location.path }

    /// Throws `problem`, for whoever must not read a package an earlier save left
    /// unfinished (the document layer: a document opened half recovered would be saved
    /// back as such).
    public func requireSettled() throws {
        if let problem { throw problem }
    }

    /// Whether recovery left the check marker: the package may hold what its manifest does
    /// not say, and the manifest is not trusted until the package was checked against it.
    package var isMarkedForCheck: Bool { PackageRecovery.isMarkedForCheck(location) }

    /// Reads the package's manifest and says whether it describes the package.
    ///
    /// It does when it names this very folder (the inode it was written for) and recovery
    /// left no check marker; one copied or received with the package (another inode), or
    /// written before manifests recorded it (0), is only a stat cache: hashes of files
    /// whose stat data match, as `PackageScan` uses it.
    ///
    /// - Throws: `FileSystemError` when the package cannot be looked at; a manifest that
    ///   cannot be used is no error (`ManifestReading.problem`).
    /// - Complexity: one read of the index and its deltas, one `stat`.
    public func readManifest() throws -> ManifestReading {
        var reading = ManifestReading()
        do {
            reading.manifest = try PackageManifest.load(packagePath: location.path)
        } catch let problem as ManifestError {
            reading.problem = problem
        }
        guard let manifest = reading.manifest else { return reading }
        let identity = try FileSystem.status(location.path).inode
        reading.isForThisFolder = manifest.packageIdentity == identity
        reading.describesPackage = reading.isForThisFolder && !isMarkedForCheck
        return reading
    }

    /// A package's manifest as `readManifest()` found it.
    public struct ManifestReading: Sendable {
        /// The manifest; nil when the package has none or it cannot be used (`problem`).
        public var manifest: PackageManifest?
        /// Why an existing manifest cannot be used (damaged, a future version…).
        public var problem: ManifestError?
        /// Whether the manifest was written for this very folder (not copied or received
        /// with it, not from before manifests recorded their folder).
        public var isForThisFolder = false
        /// Whether the manifest can be taken as the package's state without checking the
        /// package: written for this folder, and no check asked for since.
        public var describesPackage = false
    }
}
