/// A manifest that cannot be trusted: truncated, damaged, of a version we do not read,
/// or inconsistent with itself. Never used: callers rebuild it by hashing the package.
public struct ManifestError: InputRejectedError, Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        case truncated
        case badMagic
        case checksumMismatch
        case futureVersion(UInt32)
        case inconsistent(String)
        case brokenDeltaChain(String)
    }

    /// The manifest file at fault.
    public var path: String
    public var reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        let why: String
        switch reason {
        case .truncated: why = "it is truncated"
        case .badMagic: why = "it is not a pkgtool manifest"
        case .checksumMismatch: why = "its checksum does not match (damaged or truncated)"
        case .futureVersion(let version):
            why = "it has format version \(version), newer than this pkgtool reads (\(ManifestFormat.version))"
        case .inconsistent(let detail): why = "it is inconsistent (\(detail))"
        case .brokenDeltaChain(let detail): why = "its delta chain is broken (\(detail))"
        }
        return "manifest '\(path)' cannot be trusted: \(why)"
    }
}
