/// A path below a package's root: "/"-separated names, normalised — no empty, `.` or `..`
/// component, no leading or trailing slash, no NUL — so that it can only name something
/// inside the package. The empty path is the root itself.
///
/// Every join, split and normalisation of package-relative paths lives here. Snapshot
/// entries keep their paths as plain strings for speed; anything read from outside (a
/// journal, a manifest, an archive) becomes a `RelativePath` through `init?(validating:)`
/// before it is used to touch the disk.
package struct RelativePath: Hashable, Sendable, CustomStringConvertible {
    /// The path's text; "" for the root.
    package let string: String

    /// The root of the package.
    package static let root = RelativePath(trusted: "")

    /// `text` when it is a normalised relative path (see the type's summary); nil otherwise.
    package init?(validating text: String) {
        guard Self.isNormalized(text) else { return nil }
        string = text
    }

    /// A path known to be normalised (built by joining validated names).
    package init(trusted text: String) { string = text }

    package var isRoot: Bool { string.isEmpty }

    /// The path of the directory holding this entry (the root for a top-level entry).
    package var parent: RelativePath { RelativePath(trusted: Self.splitLast(string).directory) }

    /// The last component ("" for the root).
    package var name: String { Self.splitLast(string).name }

    /// The components, outermost first.
    package var components: [Substring] { string.split(separator: "/") }

    /// This path with `name` appended; `name` must be one valid component.
    package func appending(_ name: String) -> RelativePath {
        precondition(Self.isValidName(name), "not a single path component: \(name)")
        return RelativePath(trusted: Self.join(string, name))
    }

    /// Whether this path is `other` or lies beneath it.
    package func isSelfOrDescendant(of other: RelativePath) -> Bool {
        other.isRoot || string == other.string || string.hasPrefix(other.string + "/")
    }

    package var description: String { string }

    // MARK: Operations on path text

    /// Whether `text` is a normalised relative path ("" counts: the root).
    package static func isNormalized(_ text: String) -> Bool {
        if text.isEmpty { return true }
        if text.utf8.count > 4095 { return false }
        return text.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { isValidName(String($0)) }
    }

    /// Whether `name` can be one component: not empty, not `.` or `..`, no `/` and no NUL.
    package static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/"))
            && !name.utf8.contains(0)
    }

    /// `parent/child`, without doubling a slash; `child` alone when `parent` is empty.
    package static func join(_ parent: String, _ child: String) -> String {
        if parent.isEmpty { return child }
        if child.isEmpty { return parent }
        return parent.hasSuffix("/") ? parent + child : parent + "/" + child
    }

    /// The text before the last slash ("" when none; "/" for a child of the root directory)
    /// and the last component.
    package static func splitLast(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
        let directory = String(path[..<slash])
        let name = String(path[path.index(after: slash)...])
        return (directory.isEmpty && path.hasPrefix("/") ? "/" : directory, name)
    }

    /// The directory part of `path` ("" at the top level).
    package static func parent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        return String(path[..<slash])
    }

    /// The last component of `path`.
    package static func lastComponent(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `path` without trailing slashes ("/" stays "/").
    package static func trimmingTrailingSlashes(_ path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.utf8.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }

    /// The number of slashes: 0 for a top-level entry.
    package static func depth(of path: String) -> Int {
        path.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }
    }
}
