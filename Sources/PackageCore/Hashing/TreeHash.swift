/// What a tree entry is, as the Merkle hash records it: the kind plus the one mode bit
/// that matters (owner-executable), the rule git follows.
public enum EntryTag: UInt8, Sendable, Hashable {
    /// A regular file whose owner-execute bit is clear ("f").
    case file = 0x66  // "f"
    /// A regular file whose owner-execute bit is set ("x").
    case executableFile = 0x78  // "x"
    /// A symbolic link ("l").
    case symbolicLink = 0x6C  // "l"
    /// A directory ("d").
    case directory = 0x64  // "d"

    /// The tag of an entry of `kind` with `permissions`; nil for a kind that is not package
    /// content (FIFO, socket, device).
    public init?(kind: FileKind, permissions: UInt32) {
        switch kind {
        case .regular: self = permissions & 0o100 != 0 ? .executableFile : .file
        case .directory: self = .directory
        case .symbolicLink: self = .symbolicLink
        default: return nil
        }
    }
}

/// Builds a directory's hash from its children, fed in byte order of their names.
///
/// The input is `"pkgtool-tree-v1\0"` followed, per child, by its tag byte, its name in
/// UTF-8, a NUL, and its 16-byte canonical hash (Specs/hashing.md). Two directories hash
/// equal exactly when they hold the same names with the same kinds, executable bits and
/// contents, however they were built.
public struct TreeHashBuilder: ~Copyable {
    package static let domain: [UInt8] = Array("pkgtool-tree-v1".utf8) + [0]

    private let hasher = ContentHasher()
    private var scratch: [UInt8] = []
    #if DEBUG
    private var previousName: String?
    #endif

    /// A builder for a directory with no children yet.
    public init() {
        hasher.update(Self.domain)
        scratch.reserveCapacity(256)
    }

    /// Adds one child. Names must arrive in strictly increasing byte order.
    public mutating func add(name: String, tag: EntryTag, hash: ContentHash) {
        #if DEBUG
        if let previousName {
            assert(PathOrder.nameLess(previousName, name), "children out of order: \(previousName), \(name)")
        }
        previousName = name
        #endif
        // Gathered and hashed in pieces of about 16 KiB: the streamed hash is the same
        // whatever the pieces, and one update per child costs more than the child's bytes.
        scratch.append(tag.rawValue)
        scratch.append(contentsOf: name.utf8)
        scratch.append(0)
        hash.append(to: &scratch)
        if scratch.count >= 16 << 10 {
            hasher.update(scratch)
            scratch.removeAll(keepingCapacity: true)
        }
    }

    /// The directory's hash, once every child was added.
    public consuming func finish() -> ContentHash {
        if !scratch.isEmpty { hasher.update(scratch) }
        return hasher.digest()
    }

    /// The hash of an empty directory.
    public static let emptyDirectory: ContentHash = TreeHashBuilder().finish()
}
