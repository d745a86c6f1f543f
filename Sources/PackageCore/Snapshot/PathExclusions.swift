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

    /// What a subject must look like for a pattern to have a chance: the literal bytes every
    /// match starts and ends with (those before the first and after the last of `*?[]\`),
    /// up to eight of each as one integer. A subject without them is not handed to fnmatch,
    /// which is most of a scan's names for patterns like `._*` or `*~`. Plain values, so
    /// checking every entry of a scan retains nothing.
    struct Precheck: Sendable, Hashable {
        var prefix: UInt64 = 0
        var prefixLength = 0
        var suffix: UInt64 = 0
        var suffixLength = 0
        /// The whole literal prefix and suffix: a shorter subject cannot match.
        var minimumLength = 0
        var matchesPath = false
        var directoriesOnly = false

        init(pattern bytes: [UInt8], matchesPath: Bool, directoriesOnly: Bool) {
            let special = bytes.indices.filter { PathExclusions.globBytes.contains(bytes[$0]) }
            let literalPrefix = bytes[..<(special.first ?? bytes.count)]
            let literalSuffix = special.last.map { bytes[($0 + 1)...] } ?? []
            prefixLength = min(8, literalPrefix.count)
            suffixLength = min(8, literalSuffix.count)
            prefix = Self.word(literalPrefix.prefix(prefixLength))
            suffix = Self.word(literalSuffix.suffix(suffixLength))
            minimumLength = literalPrefix.count + literalSuffix.count
            self.matchesPath = matchesPath
            self.directoriesOnly = directoriesOnly
        }

        /// Whether the UTF-8 bytes `subject` may match.
        func mayMatch(_ subject: UnsafeBufferPointer<UInt8>) -> Bool {
            guard subject.count >= minimumLength else { return false }
            if prefixLength > 0 && Self.word(subject[..<prefixLength]) != prefix { return false }
            if suffixLength > 0 && Self.word(subject[(subject.count - suffixLength)...]) != suffix { return false }
            return true
        }

        /// Up to eight bytes as one integer, the first in the low byte.
        static func word<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> UInt64 {
            var value: UInt64 = 0
            for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
            return value
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
            return Pattern(
                bytes: body.utf8.map { CChar(bitPattern: $0) } + [0], matchesPath: matchesPath,
                directoriesOnly: directoriesOnly)
        }
        prechecks = compiled.map {
            Precheck(pattern: $0.bytes.dropLast().map { UInt8(bitPattern: $0) }, matchesPath: $0.matchesPath, directoriesOnly: $0.directoriesOnly)
        }
        needsPaths = compiled.contains { $0.matchesPath }
    }

    /// The bytes fnmatch gives a meaning (a wildcard, a bracket, an escape).
    fileprivate static let globBytes: [UInt8] = Array("*?[]\\".utf8)

    /// Whether some pattern matches whole paths (else names alone decide).
    private let needsPaths: Bool
    /// One per compiled pattern, in the same order.
    private let prechecks: [Precheck]

    /// Whether the entry whose last component is `name` is left out; `path` (its relative
    /// path) is made only when a pattern matches whole paths and it may match.
    package func excludes(name: String, isDirectory: Bool, path: () -> String) -> Bool {
        var fullPath = needsPaths ? path() : ""
        var name = name
        return prechecks.withUnsafeBufferPointer { checks in
            name.withUTF8 { nameBytes in
                fullPath.withUTF8 { pathBytes in
                    for index in checks.indices where isDirectory || !checks[index].directoriesOnly {
                        let check = checks[index]
                        guard check.mayMatch(check.matchesPath ? pathBytes : nameBytes) else { continue }
                        if matches(compiled[index], check.matchesPath ? pathBytes : nameBytes) { return true }
                    }
                    return false
                }
            }
        }
    }

    /// fnmatch(3) of `pattern` against the UTF-8 bytes `subject`.
    private func matches(_ pattern: Pattern, _ subject: UnsafeBufferPointer<UInt8>) -> Bool {
        var terminated = Array(subject)
        terminated.append(0)
        return pattern.bytes.withUnsafeBufferPointer { patternBytes in
            terminated.withUnsafeBufferPointer { subjectBytes in
                subjectBytes.withMemoryRebound(to: CChar.self) {
                    fnmatch(patternBytes.baseAddress!, $0.baseAddress!, pattern.matchesPath ? FNM_PATHNAME : 0) == 0
                }
            }
        }
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
