/// The names of a remote's objects under its prefix (Specs/remote.md, "Layout").
///
/// ```
/// PREFIX/HEAD                  the head record: the latest version and its recent ancestors
///                              (JSON), replaced only by compare-and-swap
/// PREFIX/versions/<sha256>     one manifest per version, immutable, named by its own SHA-256
/// PREFIX/packs/<sha256>        packs of blobs (chunks of large files, whole small files),
///                              immutable, named by their own SHA-256
/// PREFIX/index/<sha256>        where a prune moved blobs (the blob index), immutable
/// ```
enum RemoteLayout {
    static let headName = "HEAD"
    static let versionsDirectory = "versions/"
    static let packsDirectory = "packs/"
    static let indexDirectory = "index/"
    /// Scratch objects a push writes (and removes) to check that the store honours
    /// conditional writes: `pkgtool-probe-<16 hex>`, one name per push so that pushes
    /// running at once do not disturb each other's checks.
    static let probeName = "pkgtool-probe"

    static func head(_ location: RemoteLocation) -> String { location.key(headName) }
    static func version(_ id: SHA256Digest, _ location: RemoteLocation) -> String {
        location.key(versionsDirectory + id.description)
    }
    static func pack(_ id: SHA256Digest, _ location: RemoteLocation) -> String {
        location.key(packsDirectory + id.description)
    }
    static func index(_ id: SHA256Digest, _ location: RemoteLocation) -> String {
        location.key(indexDirectory + id.description)
    }
    static func probe(_ location: RemoteLocation, token: UInt64) -> String {
        let hex = String(token, radix: 16)
        return location.key(probeName + "-" + String(repeating: "0", count: 16 - hex.count) + hex)
    }
    /// The prefix every object of the remote begins with, for listing it.
    static func listingPrefix(_ location: RemoteLocation) -> String { location.prefix.isEmpty ? "" : location.prefix + "/" }
}
