import Glibc

/// Names a scan leaves out of a tree, as `rsync --exclude` and `.gitignore` patterns do:
/// shell globs (`*`, `?`, `[…]`, fnmatch(3)) matched against the bytes of names, never
/// against a normalised `String`.
///
/// - A pattern without `/` matches an entry's name at any depth (`.DS_Store`, `*.tmp`).
/// - A pattern with a `/` inside matches the whole relative path (`media/cache/*`); a
///   leading `/` anchors it at the top (`/build`), and `*` then never crosses a `/`.
/// - A trailing `/` restricts a pattern to directories (`cache/`).
///
/// An excluded directory is left out with everything beneath it.
public struct PathExclusions: Sendable, Hashable {
    struct Pattern: Sendable, Hashable {
        /// NUL-terminated pattern bytes, for fnmatch.
        var bytes: [CChar]
        var matchesPath: Bool
        var directoriesOnly: Bool
        /// The literal bytes every match starts and ends with (those before the first and
        /// after the last of `*?[]\`): a subject without them is not handed to fnmatch,
        /// which is most of a scan's subjects for patterns like `._*` or `*~`.
        var literalPrefix: [UInt8]
        var literalSuffix: [UInt8]

        /// Whether the UTF-8 bytes `subject` may match: they start with the literal prefix
        /// and end with the literal suffix, without the two overlapping.
        func mayMatch(_ subject: UnsafeBufferPointer<UInt8>) -> Bool {
            guard subject.count >= literalPrefix.count + literalSuffix.count else { return false }
            return literalPrefix.withUnsafeBufferPointer { prefix in
                literalSuffix.withUnsafeBufferPointer { suffix in
                    (prefix.isEmpty || memcmp(subject.baseAddress!, prefix.baseAddress!, prefix.count) == 0)
                        && (suffix.isEmpty
                            || memcmp(subject.baseAddress! + (subject.count - suffix.count), suffix.baseAddress!, suffix.count) == 0)
                }
            }
        }
    }

    /// The patterns as given.
    public let patterns: [String]
    private let compiled: [Pattern]

    /// The litter desktop systems and editors leave in folders, which nobody wants in a
    /// package or an archive: Finder's `.DS_Store` and `._*` AppleDouble files, Windows'
    /// `Thumbs.db` and `desktop.ini`, vim's `.*.swp`, emacs's `*~` and `.#*` lock links.
    public static let litter = PathExclusions([".DS_Store", "._*", "Thumbs.db", "desktop.ini", ".*.swp", "*~", ".#*"])

    /// Nothing excluded.
    public static let none = PathExclusions([])

    /// Exclusions from patterns (see the type's documentation); an empty pattern, or one
    /// holding NUL, matches nothing.
    public init(_ patterns: [String]) {
        self.patterns = patterns
        compiled = patterns.compactMap { text in
            var body = Substring(text)
            let directoriesOnly = body.hasSuffix("/")
            while body.hasSuffix("/") { body = body.dropLast() }
            let anchored = body.hasPrefix("/")
            while body.hasPrefix("/") { body = body.dropFirst() }
            guard !body.isEmpty, !body.utf8.contains(0) else { return nil }
            let matchesPath = anchored || body.utf8.contains(UInt8(ascii: "/"))
            let bytes = Array(body.utf8)
            let special = bytes.indices.filter { Self.globBytes.contains(bytes[$0]) }
            return Pattern(
                bytes: bytes.map { CChar(bitPattern: $0) } + [0], matchesPath: matchesPath,
                directoriesOnly: directoriesOnly,
                literalPrefix: Array(bytes[..<(special.first ?? bytes.count)]),
                literalSuffix: special.last.map { Array(bytes[($0 + 1)...]) } ?? [])
        }
        needsPaths = compiled.contains { $0.matchesPath }
    }

    /// The bytes fnmatch gives a meaning (a wildcard, a bracket, an escape).
    private static let globBytes: [UInt8] = Array("*?[]\\".utf8)

    /// Whether some pattern matches whole paths (else names alone decide).
    private let needsPaths: Bool

    /// Whether the entry whose last component is `name` is left out; `path` (its relative
    /// path) is made only when a pattern matches whole paths and it may match.
    package func excludes(name: String, isDirectory: Bool, path: () -> String) -> Bool {
        let fullPath = needsPaths ? path() : ""
        for pattern in compiled where isDirectory || !pattern.directoriesOnly {
            var subject = pattern.matchesPath ? fullPath : name
            guard subject.withUTF8({ pattern.mayMatch($0) }) else { continue }
            let matched = pattern.bytes.withUnsafeBufferPointer { patternBytes in
                subject.withCString { fnmatch(patternBytes.baseAddress!, $0, pattern.matchesPath ? FNM_PATHNAME : 0) == 0 }
            }
            if matched { return true }
        }
        return false
    }

    /// These exclusions and `other`'s.
    public func adding(_ other: PathExclusions) -> PathExclusions { PathExclusions(patterns + other.patterns) }

    /// Whether nothing is excluded.
    public var isEmpty: Bool { compiled.isEmpty }

    /// Whether the entry at `path` (relative, "/"-separated), whose last component is
    /// `name`, is left out.
    public func excludes(path: String, name: String, isDirectory: Bool) -> Bool {
        excludes(name: name, isDirectory: isDirectory) { path }
    }
}
