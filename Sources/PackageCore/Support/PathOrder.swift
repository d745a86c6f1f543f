import Glibc

/// The one order of names and paths used everywhere: manifests, diffs, listings, archives.
///
/// Names compare by their UTF-8 bytes (not Swift's `String <`, which follows Unicode
/// canonical equivalence and would call two distinct file names equal). Paths compare
/// component by component, so a directory's entries sort right after it (depth-first).
public enum PathOrder {
    /// Byte order of the UTF-8 encodings.
    @inlinable
    public static func nameLess(_ lhs: String, _ rhs: String) -> Bool {
        compareBytes(lhs, rhs, slashIsLowest: false) < 0
    }

    /// Depth-first order of "/"-separated relative paths: as byte order with "/" sorting
    /// before every other byte.
    @inlinable
    public static func pathLess(_ lhs: String, _ rhs: String) -> Bool {
        compareBytes(lhs, rhs, slashIsLowest: true) < 0
    }

    /// Whether two strings have identical UTF-8 bytes (Swift's `==` would equate
    /// canonically equivalent but distinct names).
    @inlinable
    public static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && compareBytes(lhs, rhs, slashIsLowest: false) == 0
    }

    /// -1, 0 or 1.
    @inlinable
    public static func compareBytes(_ lhs: String, _ rhs: String, slashIsLowest: Bool) -> Int {
        var left = lhs
        var right = rhs
        return left.withUTF8 { a in
            right.withUTF8 { b in
                let common = min(a.count, b.count)
                if !slashIsLowest {
                    let order = common == 0 ? 0 : memcmp(a.baseAddress!, b.baseAddress!, common)
                    if order != 0 { return order < 0 ? -1 : 1 }
                } else {
                    var index = 0
                    while index < common {
                        let x = a[index]
                        let y = b[index]
                        if x != y {
                            if x == 0x2F { return -1 }
                            if y == 0x2F { return 1 }
                            return x < y ? -1 : 1
                        }
                        index += 1
                    }
                }
                return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
            }
        }
    }
}
