import PackageCore

/// An archive refused: corrupt, inconsistent, hostile or beyond a limit. One line naming the
/// archive, the entry when there is one, and the reason; the CLI exits 1 on it.
///
/// Trouble reading or writing files (permission denied, disk full) is a `FileSystemError`
/// instead (exit 2).
public struct ZipError: InputRejectedError, Sendable, Equatable {
    /// What kind of fault, for callers and tests that act on it.
    public enum Kind: String, Sendable, Equatable {
        /// Not a ZIP archive at all (no end-of-central-directory record).
        case notAnArchive
        /// A record ends past the end of the file, or the file ends inside a stream.
        case truncated
        /// A record or field is malformed (bad signature, impossible length, bad extra field).
        case malformed
        /// Two records that must agree do not (local vs central header, counts, offsets).
        case inconsistent
        /// Bytes before the first entry or after the end record.
        case junk
        /// A name that would leave the destination or is not a plain relative path.
        case unsafeName
        /// A symbolic link that leads out of the destination, or an entry beneath a link.
        case symlinkEscape
        /// Two entries whose data overlap (a non-recursive zip bomb).
        case overlap
        /// The same path twice (or as a file and a directory).
        case duplicate
        /// Data that inflates to a size other than the declared one, or a bad stream.
        case badData
        /// A CRC-32 that does not match the data.
        case crcMismatch
        /// Our XXH3-128 content hash does not match the data.
        case hashMismatch
        /// Encrypted entries: not supported.
        case encrypted
        /// A compression method other than store and deflate: not supported.
        case unsupportedMethod
        /// Split (multi-disk) archives, device files and other features not supported.
        case unsupported
        /// Past a configured limit (entries, total size, entry size, ratio, name length).
        case limit
        /// The archive reads two ways and other tools would pick the other: another end
        /// record or central directory hidden in the comment; on a destination that folds
        /// case or normalises names, two entries that would land on one file.
        case ambiguous
        /// A top-level `.pkgtool` (pkgtool's own state), which no archive may carry.
        case reservedName
    }

    /// Which rule the archive broke.
    public var kind: Kind
    /// The archive's path as given.
    public var archive: String
    /// The entry's name, when the fault belongs to one.
    public var entry: String?
    /// The reason, as a phrase ("CRC-32 is 1a2b3c4d, the header says 00000000").
    public var reason: String

    package init(_ kind: Kind, archive: String, entry: String? = nil, _ reason: String) {
        self.kind = kind
        self.archive = archive
        self.entry = entry
        self.reason = reason
    }

    /// One line: `refused 'ARCHIVE': entry 'NAME': REASON`, control characters of the name
    /// written as C escapes so that no name can forge a line of output.
    public var description: String {
        var text = "refused '\(archive)'"
        if let entry { text += ": entry '\(Self.printable(entry))'" }
        return text + ": " + reason
    }

    /// A name with its control characters (C0, DEL, C1) escaped as the CLI writes names
    /// (Specs/cli.md, "Names"): `\n`, `\t`… and three octal digits per UTF-8 byte for the
    /// others (ESC is `\033`, U+009B is `\302\233`), so that a message stays one honest line.
    static func printable(_ name: String) -> String { TextEscaping.escapingControlCharacters(name) }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
