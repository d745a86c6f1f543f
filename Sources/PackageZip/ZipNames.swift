import PackageCore

/// Entry names: decoding (UTF-8 or CP437) and the rules a name must follow to be extracted.
enum ZipNames {
    /// Decodes a raw name. With general-purpose bit 11 it must be UTF-8; without it, valid
    /// UTF-8 is taken as UTF-8 (zip 3.0 writes raw UTF-8 without the flag, and unzip, 7-Zip
    /// and bsdtar read it so) and anything else as code page 437, the format's default.
    static func decode(_ bytes: UnsafeRawBufferPointer, utf8Flag: Bool) -> String? {
        let units = bytes.bindMemory(to: UInt8.self)
        if let text = String(validating: units, as: UTF8.self) { return text }
        if utf8Flag { return nil }
        var result = ""
        result.unicodeScalars.reserveCapacity(bytes.count)
        for byte in units {
            if byte < 0x80 {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result.unicodeScalars.append(Unicode.Scalar(cp437High[Int(byte) - 0x80])!)
            }
        }
        return result
    }

    /// Hosts of "version made by" whose tools write `\` between components: MS-DOS (FAT),
    /// Windows NTFS, VFAT. Their names are read with "/" instead, as unzip and bsdtar read
    /// them (.NET's ZipFile and PowerShell's Compress-Archive wrote such archives).
    static let backslashHosts: Set<UInt16> = [0, 11, 14]

    /// `name` with `\` read as "/" when the archive's host writes it so.
    static func separatorsFixed(_ name: String, host: UInt16) -> String {
        guard backslashHosts.contains(host), name.utf8.contains(UInt8(ascii: "\\")) else { return name }
        return String(decoding: name.utf8.map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "/") : $0 }, as: UTF8.self)
    }

    /// Why a name is unsafe or not a plain relative path, or nil when it is fine.
    ///
    /// `name` is as stored, a directory's with its trailing "/". Refused: empty names, NUL,
    /// absolute paths, drive letters, empty, "." and ".." components, with "\\" counted as a
    /// separator as well as "/"; paths (without a directory's "/") longer than
    /// `maximumLength` bytes, components longer than 255 (NAME_MAX).
    static func problem(with name: String, maximumLength: Int) -> String? {
        let bytes = Array(name.utf8)
        if bytes.isEmpty { return "the name is empty" }
        let length = bytes.last == UInt8(ascii: "/") ? bytes.count - 1 : bytes.count
        if length > maximumLength {
            return "the path is \(length) bytes long, over the limit of \(maximumLength) (PATH_MAX is 4096 bytes with the NUL)"
        }
        if bytes.contains(0) { return "the name contains a NUL byte" }
        // A backslash is an ordinary character on Linux, but a separator to Windows tools:
        // the checks below treat it as one, so "..\\x" and "\\x" are refused too.
        if bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "\\") { return "the name is an absolute path" }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"), isLetter(bytes[0]) {
            return "the name starts with a drive letter"
        }
        var body = bytes[...]
        if body.last == UInt8(ascii: "/") { body = body.dropLast() }
        if body.isEmpty { return "the name is empty" }
        // One pass over the components (no array of slices: names may be 64 KiB long).
        var start = body.startIndex
        for end in body.startIndex...body.endIndex
        where end == body.endIndex || body[end] == UInt8(ascii: "/") || body[end] == UInt8(ascii: "\\") {
            let count = end - start
            if count == 0 { return "the name has an empty component (two separators in a row)" }
            if count == 1 && body[start] == UInt8(ascii: ".") { return "the name has a '.' component" }
            if count == 2 && body[start] == UInt8(ascii: ".") && body[start + 1] == UInt8(ascii: ".") {
                return "the name has a '..' component (path traversal)"
            }
            if count > 255 { return "a component of the name is \(count) bytes long, over the limit of 255 (NAME_MAX)" }
            start = end + 1
        }
        return nil
    }

    /// Why the link at `path` (relative to the archive's root) to `target` leads out of
    /// the tree, read lexically ("a/b" → "../../x" climbs out); nil when it stays inside.
    /// The reader also follows chains through other links; this is the writer's warning.
    static func linkLeadsOut(path: String, target: String) -> String? {
        if target.utf8.first == UInt8(ascii: "/") { return "the link points to an absolute path ('\(target)')" }
        var depth = RelativePath.components(of: path).count - 1
        for component in RelativePath.components(of: target) {
            if component.utf8.elementsEqual("..".utf8) {
                depth -= 1
                if depth < 0 { return "the link's target '\(target)' leads out of the tree" }
            } else if !component.utf8.elementsEqual(".".utf8) {
                depth += 1
            }
        }
        return nil
    }

    /// `name` without its leading "./" pairs (bsdtar's tar-style names): one pass, one copy,
    /// however many pairs a hostile name repeats.
    static func droppingDotSlashes(_ name: String) -> String {
        let bytes = name.utf8
        var start = bytes.startIndex
        while let dot = bytes[start...].first, dot == UInt8(ascii: "."),
            bytes.index(after: start) < bytes.endIndex, bytes[bytes.index(after: start)] == UInt8(ascii: "/")
        {
            start = bytes.index(start, offsetBy: 2)
        }
        return start == bytes.startIndex ? name : String(name[start...])
    }

    /// The top-level name reserved for pkgtool's own state (`.pkgtool`), and any name a
    /// case-folding or normalising file system would take for it (`.PKGTOOL`, or with the
    /// Kelvin sign U+212A for the k): such an archive is refused, never extracted.
    /// Trailing dots and spaces count too (`.pkgtool.`): vfat and Windows drop them.
    static func isReservedTopLevel(_ name: String) -> Bool {
        // Split on the byte: a "/" followed by a combining mark is one Character, not "/".
        var first = Substring(name.utf8.prefix { $0 != UInt8(ascii: "/") })
        while let last = first.last, last == "." || last == " ", first.count > 1 { first = first.dropLast() }
        return first.utf8.count <= 3 * PackageLayout.metadataDirectoryName.utf8.count
            && first.lowercased() == PackageLayout.metadataDirectoryName
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// Code page 437, bytes 0x80–0xFF.
    static let cp437High: [UInt32] = [
        0x00C7, 0x00FC, 0x00E9, 0x00E2, 0x00E4, 0x00E0, 0x00E5, 0x00E7, 0x00EA, 0x00EB, 0x00E8, 0x00EF, 0x00EE, 0x00EC,
        0x00C4, 0x00C5, 0x00C9, 0x00E6, 0x00C6, 0x00F4, 0x00F6, 0x00F2, 0x00FB, 0x00F9, 0x00FF, 0x00D6, 0x00DC, 0x00A2,
        0x00A3, 0x00A5, 0x20A7, 0x0192, 0x00E1, 0x00ED, 0x00F3, 0x00FA, 0x00F1, 0x00D1, 0x00AA, 0x00BA, 0x00BF, 0x2310,
        0x00AC, 0x00BD, 0x00BC, 0x00A1, 0x00AB, 0x00BB, 0x2591, 0x2592, 0x2593, 0x2502, 0x2524, 0x2561, 0x2562, 0x2556,
        0x2555, 0x2563, 0x2551, 0x2557, 0x255D, 0x255C, 0x255B, 0x2510, 0x2514, 0x2534, 0x252C, 0x251C, 0x2500, 0x253C,
        0x255E, 0x255F, 0x255A, 0x2554, 0x2569, 0x2566, 0x2560, 0x2550, 0x256C, 0x2567, 0x2568, 0x2564, 0x2565, 0x2559,
        0x2558, 0x2552, 0x2553, 0x256B, 0x256A, 0x2518, 0x250C, 0x2588, 0x2584, 0x258C, 0x2590, 0x2580, 0x03B1, 0x00DF,
        0x0393, 0x03C0, 0x03A3, 0x03C3, 0x00B5, 0x03C4, 0x03A6, 0x0398, 0x03A9, 0x03B4, 0x221E, 0x03C6, 0x03B5, 0x2229,
        0x2261, 0x00B1, 0x2265, 0x2264, 0x2320, 0x2321, 0x00F7, 0x2248, 0x00B0, 0x2219, 0x00B7, 0x221A, 0x207F, 0x00B2,
        0x25A0, 0x00A0,
    ]
}

/// A path as its UTF-8 bytes, for dictionaries and sets: Swift's `String` equality and
/// hashing follow Unicode canonical equivalence, which would make "é" (precomposed) and
/// "é" (e + combining accent), two distinct names on Linux, one key.
struct PathKey: Hashable, Sendable {
    let bytes: [UInt8]
    init(_ path: String) { bytes = Array(path.utf8) }
    init<S: StringProtocol>(_ path: S) { bytes = Array(path.utf8) }

    /// The bytes as one block (the synthesized hash would feed them one at a time).
    func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
}
