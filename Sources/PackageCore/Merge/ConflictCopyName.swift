/// A day of the calendar, as a conflict copy's name shows it ("2026-12-06").
///
/// The caller picks the time zone: a person expects the day they see on their clock, which
/// a pure function cannot know.
public struct CalendarDay: Sendable, Hashable, CustomStringConvertible {
    /// The year (proleptic Gregorian).
    public var year: Int
    /// The month, 1 to 12.
    public var month: Int
    /// The day of the month, 1 to 31.
    public var day: Int

    /// A day from its parts.
    public init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The day `secondsSince1970` falls on, `offsetSeconds` east of UTC (0 for UTC; a local
    /// time zone's offset for the day a person sees).
    public init(secondsSince1970: Int64, offsetSeconds: Int64 = 0) {
        let seconds = secondsSince1970 + offsetSeconds
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm, in 400-year eras).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        self.init(
            year: Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), month: Int(month),
            day: Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1))
    }

    /// `YYYY-MM-DD`, zero-padded.
    public var description: String {
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.utf8.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }
}

/// Names the copy that keeps other's version of a conflict beside local's:
/// `report (conflict 2026-12-06 laptop).txt`, in the same directory, never a name the merged
/// tree already holds.
///
/// Names are bytes: a candidate is free when no path has its exact UTF-8 bytes, so
/// `café.txt` written precomposed and decomposed get two copies, as they are two files.
public enum ConflictCopyName {
    /// The longest name most Linux file systems take (`NAME_MAX`), in bytes.
    public static let maximumNameBytes = 255
    /// The longest suffix counted as an extension (`.json`, `.pages`); a longer one, or one
    /// with a space, is part of the name.
    static let maximumExtensionBytes = 16
    /// The most bytes of the host name a copy's name carries.
    static let maximumHostBytes = 64

    /// A sibling of `path` for other's version: `NAME (conflict DAY HOST).EXT`, then
    /// `NAME (conflict DAY HOST 2).EXT`, `… 3)` and on while `isTaken` says a candidate is
    /// used.
    ///
    /// The extension is what follows the last dot, unless that dot opens the name (`.config`
    /// has none) or ends it; it stays last so the copy opens with the same app. `host` loses
    /// `/`, NUL and control characters and is cut to 64 bytes; an empty host is left out.
    /// The name part is shortened (at a character boundary) to keep the whole under
    /// `maximumNameBytes`.
    ///
    /// - Complexity: one `isTaken` call per candidate, O(name length) each.
    public static func path(
        for path: RelativePath, day: CalendarDay, host: String, isTaken: (RelativePath) -> Bool
    ) -> RelativePath {
        precondition(!path.isRoot, "the package root has no conflict copy")
        let (stem, suffix) = split(path.name)
        let cleanHost = sanitized(host)
        let parent = path.parent.string
        var counter = 1
        while true {
            var label = " (conflict \(day)"
            if !cleanHost.isEmpty { label += " " + cleanHost }
            if counter > 1 { label += " \(counter)" }
            label += ")"
            let room = maximumNameBytes - label.utf8.count - suffix.utf8.count
            let name = prefix(of: stem, bytes: room) + label + suffix
            let candidate = RelativePath(trusted: RelativePath.join(parent, name))
            if !isTaken(candidate) { return candidate }
            counter += 1
        }
    }

    /// `path(for:day:host:isTaken:)` against the paths of `tree` and `taken` (the copies
    /// already named for other conflicts of the same merge), byte-exact.
    ///
    /// - Complexity: O(log n) byte comparisons per candidate.
    public static func path(
        for path: RelativePath, day: CalendarDay, host: String, avoiding tree: TreeSnapshot,
        alsoAvoiding taken: Set<RelativePath> = []
    ) -> RelativePath {
        self.path(for: path, day: day, host: host) { candidate in
            taken.contains(candidate) || tree.index(of: candidate.string) != nil
        }
    }

    /// The name without its extension, and the extension with its dot ("" when none).
    static func split(_ name: String) -> (stem: String, suffix: String) {
        let bytes = name.utf8
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot != bytes.startIndex else { return (name, "") }
        let suffix = bytes[dot...]
        guard suffix.count > 1, suffix.count <= maximumExtensionBytes, !suffix.contains(UInt8(ascii: " ")) else {
            return (name, "")
        }
        return (String(Substring(bytes[..<dot])), String(Substring(suffix)))
    }

    /// `host` fit for a file name: `/`, NUL and control characters become `-`; at most
    /// `maximumHostBytes` bytes.
    static func sanitized(_ host: String) -> String {
        var clean = String.UnicodeScalarView()
        for scalar in host.unicodeScalars {
            let unfit = scalar == "/" || scalar.value < 0x20 || scalar.value == 0x7F
            clean.append(unfit ? "-" : scalar)
        }
        return prefix(of: String(clean), bytes: maximumHostBytes)
    }

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends between
    /// Unicode scalars (at least one scalar, so that a name never becomes empty).
    static func prefix(of text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var result = String.UnicodeScalarView()
        var count = 0
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            if count + width > bytes, !result.isEmpty { break }
            result.append(scalar)
            count += width
        }
        return String(result)
    }
}

extension TreeMerge {
    /// The path for other's version of the conflict at `path`: a sibling no entry of the
    /// merged tree (nor any of `taken`) has (`ConflictCopyName`).
    ///
    /// - Complexity: O(log n) byte comparisons per candidate name.
    public func conflictCopyPath(
        for path: RelativePath, day: CalendarDay, host: String, alsoAvoiding taken: Set<RelativePath> = []
    ) -> RelativePath {
        ConflictCopyName.path(for: path, day: day, host: host, avoiding: tree, alsoAvoiding: taken)
    }
}
