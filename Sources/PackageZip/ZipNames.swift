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

    /// Why an entry's name is refused: one line, and whether it passes a length limit
    /// (`ZipError.Kind.limit`) rather than being unsafe (`.unsafeName`).
    struct Refusal: Error {
        var reason: String
        var isLimit = false
    }

    /// The entry's path and whether its name ends in "/" (a directory's), or why the name
    /// is refused.
    ///
    /// `name` is as stored (separators fixed, "./" pairs dropped). Its path must pass
    /// `RelativePath`'s rules, the one validation of paths from outside (no empty, "." or
    /// ".." component, no NUL, at most 4,095 bytes: `RelativePath.problem(with:)`). On top of
    /// them, only what is ZIP's own: an absolute name or a drive letter is refused with
    /// its own message; `\` counts as a separator for the checks (a Windows tool would
    /// climb out of "..\\x"), though the path keeps it as an ordinary byte; a path (without
    /// a directory's "/") over `maximumLength` bytes or a component over 255 (NAME_MAX)
    /// is past a limit.
    static func path(of name: String, maximumLength: Int) -> Result<(path: RelativePath, isDirectory: Bool), Refusal> {
        let bytes = name.utf8
        guard let first = bytes.first else { return .failure(Refusal(reason: "the name is empty")) }
        let isDirectory = bytes.last == UInt8(ascii: "/")
        let body = isDirectory ? String(Substring(bytes.dropLast())) : name
        let length = body.utf8.count
        if length > maximumLength { return .failure(tooLong(length, limit: maximumLength)) }
        if first == UInt8(ascii: "/") || first == UInt8(ascii: "\\") {
            return .failure(Refusal(reason: "the name is an absolute path"))
        }
        if bytes.count >= 2, bytes[bytes.index(after: bytes.startIndex)] == UInt8(ascii: ":"), isLetter(first) {
            return .failure(Refusal(reason: "the name starts with a drive letter"))
        }
        if body.isEmpty { return .failure(Refusal(reason: "the name is empty")) }
        // The checks read "\\" as "/"; the path itself keeps it (an ordinary byte on Linux).
        let checked =
            body.utf8.contains(UInt8(ascii: "\\"))
            ? String(decoding: body.utf8.map { $0 == UInt8(ascii: "\\") ? UInt8(ascii: "/") : $0 }, as: UTF8.self) : body
        if let problem = RelativePath.problem(with: checked) { return .failure(refusal(problem)) }
        let longest = longestComponent(checked)
        if longest > 255 {
            return .failure(
                Refusal(
                    reason: "a component of the name is \(longest) bytes long, over the limit of 255 (NAME_MAX)", isLimit: true))
        }
        // Cannot fail once `checked` passed: `body` has the same components or longer ones.
        guard let path = RelativePath(validating: body) else {
            return .failure(Refusal(reason: "the name is not a relative path"))
        }
        return .success((path, isDirectory))
    }

    private static func tooLong(_ length: Int, limit: Int) -> Refusal {
        Refusal(
            reason:
                "the path is \(length) bytes long, over the limit of \(limit) (PATH_MAX is 4096 bytes with the NUL)",
            isLimit: true)
    }

    /// `RelativePath`'s reason, in the words of an archive's name.
    private static func refusal(_ problem: RelativePath.Problem) -> Refusal {
        switch problem {
        case .tooLong(let bytes): return tooLong(bytes, limit: RelativePath.maximumLength)
        case .nul: return Refusal(reason: "the name contains a NUL byte")
        case .emptyComponent: return Refusal(reason: "the name has an empty component (two separators in a row)")
        case .dot: return Refusal(reason: "the name has a '.' component")
        case .dotDot: return Refusal(reason: "the name has a '..' component (path traversal)")
        }
    }

    /// The bytes of the longest "/"-separated component (one pass, no array of slices:
    /// names may be 64 KiB long).
    private static func longestComponent(_ path: String) -> Int {
        var longest = 0
        var current = 0
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                current = 0
            } else {
                current += 1
                longest = max(longest, current)
            }
        }
        return longest
    }

    /// Why the link at `path` (relative to the archive's root) to `target` leads out of
    /// the tree, read lexically ("a/b" → "../../x" climbs out); nil when it stays inside.
    /// The reader also follows chains through other links; this is the writer's warning.
    static func linkLeadsOut(path: RelativePath, target: String) -> String? {
        if target.utf8.first == UInt8(ascii: "/") { return "the link points to an absolute path ('\(target)')" }
        var depth = RelativePath.depth(of: path.string)
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

    /// Whether `path` is pkgtool's reserved top-level name (`.pkgtool`) or lies beneath it,
    /// also as a case-folding or normalising file system would take its first component
    /// (`.PKGTOOL`, or with the Kelvin sign U+212A for the k): such an archive is refused,
    /// never extracted. Trailing dots and spaces count too (`.pkgtool.`): vfat and Windows
    /// drop them. The reserved name is `RelativePath.isInReservedTopLevel`'s, the one check;
    /// only the folding is ZIP's.
    static func isReservedTopLevel(_ path: RelativePath) -> Bool {
        if path.isInReservedTopLevel { return true }
        // Split on the byte: a "/" followed by a combining mark is one Character, not "/".
        var first = Substring(path.string.utf8.prefix { $0 != UInt8(ascii: "/") })
        guard first.utf8.count <= 3 * PackageLayout.metadataDirectoryName.utf8.count else { return false }
        while let last = first.last, last == "." || last == " ", first.count > 1 { first = first.dropLast() }
        return RelativePath(trusted: first.lowercased()).isInReservedTopLevel
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
