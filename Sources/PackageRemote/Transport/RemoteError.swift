/// Why a push, pull, log or diff against a remote failed: one line a person can act on.
///
/// `isRefusal` tells the CLI's exit status: 1 for refusals (the remote moved on, an object
/// failed verification, the prefix is not a pkgtool remote, DEST has changes not pushed, the
/// remote went back in time),
/// 2 for trouble (credentials, a missing bucket, an unreachable server, a local I/O error).
public struct RemoteError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, for a program to act on (the message says it for a person).
    public enum Kind: String, Sendable {
        /// The remote's head moved since this package's version: pull, then push again.
        case conflict
        /// An object's bytes do not match their SHA-256, or a file its content hash.
        case verificationFailed
        /// The prefix holds no pkgtool remote (no HEAD), or something else.
        case notARemote
        /// A pull would discard changes made to DEST since it was last synced.
        case unpushedChanges
        /// The remote's latest version is older than the one DEST holds, or its history no
        /// longer holds that version (rolled back or rewritten): pulling it would take DEST
        /// back in time. `--version` takes it on purpose.
        case rollback
        /// The version asked for is not in the remote's history.
        case unknownVersion
        /// An `s3://` URL, endpoint or option that cannot be used.
        case invalidLocation
        /// No credentials, no region, an unreadable CA bundle.
        case configuration
        /// The server refused the credentials (unknown key, wrong secret, expired token).
        case credentialsRefused
        /// The credentials are valid but not allowed this request.
        case accessDenied
        /// The bucket does not exist on the endpoint.
        case noSuchBucket
        /// The server could not be reached (after the retries).
        case unreachable
        /// The server answered with an error pkgtool cannot act on.
        case server
        /// The store does not honour conditional writes: versions could be lost on it.
        case unsupportedStore
        /// A local file changed while it was being pushed.
        case localChange
        /// A local file or directory could not be read or written.
        case localFailure
        /// Cancelled by the caller.
        case cancelled
    }

    /// What went wrong.
    public var kind: Kind
    /// One line for a person: the operation, the object or path, and the cause.
    public var message: String

    /// An error of `kind` saying `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }

    /// A refusal (exit status 1) rather than trouble (2).
    public var isRefusal: Bool {
        switch kind {
        case .conflict, .verificationFailed, .notARemote, .unpushedChanges, .rollback, .unknownVersion: return true
        default: return false
        }
    }
}
