/// A manifest that cannot be trusted: truncated, damaged, of a version we do not read,
/// or inconsistent with itself. Never used: callers rebuild it by hashing the package.
public struct ManifestError: InputRejectedError, Sendable, Equatable {
    /// Why the manifest was refused.
    public enum Reason: Sendable, Equatable {
        /// The file ends before its records do.
        case truncated
        /// The file does not start with a manifest's magic bytes.
        case badMagic
        /// The checksum at its end does not match its bytes: damaged or cut short.
        case checksumMismatch
        /// Written by a newer pkgtool, in a format version this one does not read.
        case futureVersion(UInt32)
        /// Its records contradict each other (order, counts, lengths), as the text says.
        case inconsistent(String)
        /// A delta file that does not follow the one before it, as the text says.
        case brokenDeltaChain(String)
    }

    /// The manifest file at fault.
    public var path: String
    /// Why it was refused.
    public var reason: Reason

    /// A refusal of the manifest file at `path`.
    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    /// One line naming the file and why it cannot be trusted.
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
