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
            return Pattern(
                bytes: body.utf8.map { CChar(bitPattern: $0) } + [0], matchesPath: matchesPath,
                directoriesOnly: directoriesOnly)
        }
    }

    /// These exclusions and `other`'s.
    public func adding(_ other: PathExclusions) -> PathExclusions { PathExclusions(patterns + other.patterns) }

    /// Whether nothing is excluded.
    public var isEmpty: Bool { compiled.isEmpty }

    /// Whether the entry at `path` (relative, "/"-separated), whose last component is
    /// `name`, is left out.
    public func excludes(path: String, name: String, isDirectory: Bool) -> Bool {
        for pattern in compiled where isDirectory || !pattern.directoriesOnly {
            let matched = pattern.bytes.withUnsafeBufferPointer { patternBytes in
                (pattern.matchesPath ? path : name).withCString { subject in
                    fnmatch(patternBytes.baseAddress!, subject, pattern.matchesPath ? FNM_PATHNAME : 0) == 0
                }
            }
            if matched { return true }
        }
        return false
    }
}
