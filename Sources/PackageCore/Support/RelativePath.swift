/// A path below a package's root: "/"-separated names, normalised — no empty, `.` or `..`
/// component, no leading or trailing slash, no NUL — so that it can only name something
/// inside the package. The empty path is the root itself.
///
/// Every join, split and normalisation of package-relative paths lives here. Snapshot
/// entries keep their paths as plain strings for speed; anything read from outside (a
/// journal, a manifest, an archive) becomes a `RelativePath` through `init?(validating:)`
/// before it is used to touch the disk.
///
/// Names are bytes: two paths are equal, hash alike and order by their UTF-8 bytes, never
/// by Swift's `String ==`, which follows Unicode canonical equivalence and would take
/// `é` and `e\u{301}` — two different files on Linux — for one. Use it as a dictionary or
/// set key wherever a path decides identity, parentage or uniqueness.
public struct RelativePath: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The path's text; "" for the root.
    public let string: String

    /// The root of the package.
    public static let root = RelativePath(trusted: "")

    /// `text` when it is a normalised relative path (see the type's summary); nil otherwise.
    public init?(validating text: String) {
        guard Self.isNormalized(text) else { return nil }
        string = text
    }

    /// A path written in the program's source (`"pages/1.json"`); it must be normalised
    /// (a trap otherwise: use `init?(validating:)` for paths from outside).
    public init(stringLiteral text: String) {
        precondition(Self.isNormalized(text), "not a normalised relative path: \(text)")
        string = text
    }

    /// A path known to be normalised (built by joining validated names).
    package init(trusted text: String) { string = text }

    /// Whether this is the package's root (the empty path).
    public var isRoot: Bool { string.isEmpty }

    /// The path of the directory holding this entry (the root for a top-level entry).
    public var parent: RelativePath { RelativePath(trusted: Self.splitLast(string).directory) }

    /// The last component ("" for the root).
    public var name: String { Self.splitLast(string).name }

    /// The components, outermost first (split on the byte "/").
    public var components: [Substring] { Self.components(of: string) }

    /// This path with `name` appended; `name` must be one valid component (a trap
    /// otherwise: check untrusted names with `isValidName` first).
    public func appending(_ name: String) -> RelativePath {
        precondition(Self.isValidName(name), "not a single path component: \(name)")
        return RelativePath(trusted: Self.join(string, name))
    }

    /// Whether this path is `other` or lies beneath it.
    public func isSelfOrDescendant(of other: RelativePath) -> Bool {
        PathOrder.isSelfOrDescendant(string, of: other.string)
    }

    /// The path's text, as `string`.
    public var description: String { string }

    /// Byte equality of the UTF-8 encodings (not canonical equivalence).
    public static func == (lhs: RelativePath, rhs: RelativePath) -> Bool { PathOrder.sameBytes(lhs.string, rhs.string) }

    /// Depth-first path order (`PathOrder.pathLess`): a directory's entries right after it.
    public static func < (lhs: RelativePath, rhs: RelativePath) -> Bool { PathOrder.pathLess(lhs.string, rhs.string) }

    /// Hashes the UTF-8 bytes, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    // MARK: Operations on path text

    /// Whether `text` is a normalised relative path ("" counts: the root).
    package static func isNormalized(_ text: String) -> Bool { problem(with: text) == nil }

    /// Why a text is not a normalised relative path.
    package enum Problem: Sendable, Equatable {
        /// Over `maximumLength` bytes.
        case tooLong(bytes: Int)
        /// A NUL byte.
        case nul
        /// An empty component: a leading, trailing or doubled "/".
        case emptyComponent
        /// A "." component.
        case dot
        /// A ".." component.
        case dotDot
    }

    /// The longest path, in bytes (PATH_MAX 4096 with the NUL).
    package static let maximumLength = 4095

    /// Why `text` is not a normalised relative path, or nil when it is ("" is: the root).
    /// The rules of the type, written once: readers that refuse names with their own
    /// message (ZIP's central directory) ask this rather than check components again.
    ///
    /// - Complexity: one pass over the bytes, no allocation.
    package static func problem(with text: String) -> Problem? {
        let bytes = text.utf8
        if bytes.isEmpty { return nil }
        if bytes.count > maximumLength { return .tooLong(bytes: bytes.count) }
        if bytes.contains(0) { return .nul }
        var length = 0
        var dots = 0
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if let problem = componentProblem(length: length, dots: dots) { return problem }
                length = 0
                dots = 0
            } else {
                length += 1
                if byte == UInt8(ascii: ".") { dots += 1 }
            }
        }
        return componentProblem(length: length, dots: dots)
    }

    private static func componentProblem(length: Int, dots: Int) -> Problem? {
        if length == 0 { return .emptyComponent }
        if length == 1 && dots == 1 { return .dot }
        if length == 2 && dots == 2 { return .dotDot }
        return nil
    }

    /// Whether `name` can be one component: not empty, not `.` or `..`, no `/` and no NUL.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && !bytes.elementsEqual(".".utf8) && !bytes.elementsEqual("..".utf8)
            && !bytes.contains(UInt8(ascii: "/")) && !bytes.contains(0)
    }

    /// The "/"-separated components of `path`, split on the byte (Swift's `split` on the
    /// character "/" would not split before a combining mark: `"a/\u{301}b"` is one grapheme
    /// cluster "/\u{301}" in the middle). Empty components are dropped.
    package static func components(of path: String) -> [Substring] {
        path.utf8.split(separator: UInt8(ascii: "/")).map { Substring($0) }
    }

    /// `parent/child`, without doubling a slash; `child` alone when `parent` is empty.
    package static func join(_ parent: String, _ child: String) -> String {
        if parent.isEmpty { return child }
        if child.isEmpty { return parent }
        return parent.utf8.last == UInt8(ascii: "/") ? parent + child : parent + "/" + child
    }

    /// The text before the last slash ("" when none; "/" for a child of the root directory)
    /// and the last component.
    package static func splitLast(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
        let directory = String(path[..<slash])
        // `utf8.index(after:)`: `path.index(after:)` steps a whole Character, and a "/"
        // followed by a combining mark is one ("a/\u{301}b" would lose its mark).
        let name = String(path[path.utf8.index(after: slash)...])
        return (directory.isEmpty && path.utf8.first == UInt8(ascii: "/") ? "/" : directory, name)
    }

    /// The directory part of `path` ("" at the top level).
    package static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    package static func lastComponent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// `path` without trailing slashes ("/" stays "/").
    package static func trimmingTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1 && trimmed.utf8.last == UInt8(ascii: "/") {
            trimmed = Substring(trimmed.utf8.dropLast())
        }
        return String(trimmed)
    }

    /// Whether this path is a top-level name pkgtool reserves for its own state (`.pkgtool`)
    /// or lies beneath one, by bytes: `PackageReservedNames`, the one list and the one check.
    package var isInReservedTopLevel: Bool {
        PackageReservedNames.isReserved(String(Substring(string.utf8.prefix { $0 != UInt8(ascii: "/") })))
    }

    /// The number of slashes: 0 for a top-level entry.
    package static func depth(of path: String) -> Int {
        path.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
    }
}
