/// "Did you mean …?" for a mistyped command or option, as git and cargo answer: the known
/// words closest to what was typed, by edit distance (a swap of two neighbours counts as
/// one edit), or those that start with it.
enum Suggestions {
    /// The closest of `candidates` to `typed`, when one is close enough to be what was
    /// meant: within a third of its length in edits (at least one), or an abbreviation of a
    /// single candidate. Nil when nothing is, or when two are equally close.
    static func closest(to typed: String, among candidates: [String]) -> String? {
        let word = Array(typed.utf8)
        guard !word.isEmpty else { return nil }
        let abbreviated = candidates.filter { $0.utf8.starts(with: word) }
        if abbreviated.count == 1 { return abbreviated[0] }
        let limit = max(1, word.count / 3)
        let scored = candidates.map { ($0, distance(word, Array($0.utf8))) }.filter { $0.1 <= limit }
        guard let best = scored.map(\.1).min() else { return nil }
        let winners = scored.filter { $0.1 == best }
        return winners.count == 1 ? winners[0].0 : nil
    }

    /// `" (did you mean 'X'?)"` for the closest candidate, or "".
    static func hint(for typed: String, among candidates: [String], prefix: String = "") -> String {
        closest(to: typed, among: candidates).map { "; did you mean '\(prefix)\($0)'?" } ?? ""
    }

    /// Optimal string alignment distance: insertions, deletions, substitutions and swaps
    /// of two neighbouring bytes each cost one.
    static func distance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
