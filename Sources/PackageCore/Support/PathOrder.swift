import Glibc

/// The one order of names and paths used everywhere: manifests, diffs, listings, archives.
///
/// Names compare by their UTF-8 bytes (not Swift's `String <`, which follows Unicode
/// canonical equivalence and would call two distinct file names equal). Paths compare
/// component by component, so a directory's entries sort right after it (depth-first).
package enum PathOrder {
    /// Byte order of the UTF-8 encodings.
    @inlinable
    package static func nameLess(_ lhs: String, _ rhs: String) -> Bool {
        compareBytes(lhs, rhs, slashIsLowest: false) < 0
    }

    /// Depth-first order of "/"-separated relative paths: as byte order with "/" sorting
    /// before every other byte.
    @inlinable
    package static func pathLess(_ lhs: String, _ rhs: String) -> Bool {
        compareBytes(lhs, rhs, slashIsLowest: true) < 0
    }

    /// Whether two strings have identical UTF-8 bytes (Swift's `==` would equate
    /// canonically equivalent but distinct names).
    @inlinable
    package static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && compareBytes(lhs, rhs, slashIsLowest: false) == 0
    }

    /// Whether the UTF-8 bytes of `text` begin with those of `prefix` (Swift's `hasPrefix`
    /// compares grapheme clusters under canonical equivalence: `"a/\u{301}b"` does not start
    /// with `"a/"` for it, and `"é/x"` starts with `"e\u{301}/"`).
    @inlinable
    package static func hasBytePrefix(_ text: String, _ prefix: String) -> Bool {
        let bytes = text.utf8
        let start = prefix.utf8
        return bytes.count >= start.count && bytes.starts(with: start)
    }

    /// `text` without its first `count` UTF-8 bytes (a prefix `hasBytePrefix` matched);
    /// `dropFirst` on a `String` would drop characters, not bytes.
    @inlinable
    package static func droppingBytes(_ count: Int, from text: String) -> String {
        String(Substring(text.utf8.dropFirst(count)))
    }

    /// Whether the UTF-8 bytes of `text` end with those of `suffix`.
    @inlinable
    package static func hasByteSuffix(_ text: String, _ suffix: String) -> Bool {
        let bytes = text.utf8
        let end = suffix.utf8
        return bytes.count >= end.count && bytes.reversed().starts(with: end.reversed())
    }

    /// Whether the relative path `path` is `directory` or lies beneath it, by bytes; every
    /// path lies beneath the root "".
    @inlinable
    package static func isSelfOrDescendant(_ path: String, of directory: String) -> Bool {
        directory.isEmpty || sameBytes(path, directory) || isDescendant(path, of: directory)
    }

    /// Whether the relative path `path` lies strictly beneath `directory`, by bytes.
    @inlinable
    package static func isDescendant(_ path: String, of directory: String) -> Bool {
        if directory.isEmpty { return !path.isEmpty }
        let bytes = path.utf8
        let count = directory.utf8.count
        guard bytes.count > count + 1, bytes.starts(with: directory.utf8) else { return false }
        return bytes[bytes.index(bytes.startIndex, offsetBy: count)] == UInt8(ascii: "/")
    }

    /// -1, 0 or 1.
    @inlinable
    package static func compareBytes(_ lhs: String, _ rhs: String, slashIsLowest: Bool) -> Int {
        var left = lhs
        var right = rhs
        return left.withUTF8 { a in
            right.withUTF8 { b in compare(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b), slashIsLowest: slashIsLowest) }
        }
    }

    /// -1, 0 or 1 for two byte strings; eight bytes at a time up to the first difference.
    @inlinable
    package static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, slashIsLowest: Bool) -> Int {
        let common = min(a.count, b.count)
        var index = 0
        while index + 8 <= common {
            let x = a.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let y = b.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if x != y {
                index += (x ^ y).littleEndian.trailingZeroBitCount / 8
                return order(a[index], b[index], slashIsLowest: slashIsLowest)
            }
            index += 8
        }
        while index < common {
            if a[index] != b[index] { return order(a[index], b[index], slashIsLowest: slashIsLowest) }
            index += 1
        }
        return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
    }

    @inlinable
    static func order(_ x: UInt8, _ y: UInt8, slashIsLowest: Bool) -> Int {
        if slashIsLowest {
            if x == 0x2F { return -1 }
            if y == 0x2F { return 1 }
        }
        return x < y ? -1 : 1
    }

    /// `items` sorted by the byte order of their names. Compares the first eight bytes as
    /// one integer first, so most comparisons never touch the strings.
    ///
    /// - Complexity: O(n log n) integer comparisons, plus full comparisons of names that
    ///   share their first eight bytes.
    package static func sortedByName<T>(_ items: [T], name: (T) -> String) -> [T] {
        guard items.count > 1 else { return items }
        let names = items.map(name)
        var keys: [(prefix: UInt64, index: Int)] = []
        keys.reserveCapacity(items.count)
        for (index, item) in names.enumerated() {
            var prefix: UInt64 = 0
            var count = 0
            for byte in item.utf8 {
                if count == 8 { break }
                prefix = prefix << 8 | UInt64(byte)
                count += 1
            }
            keys.append((prefix << (8 * UInt64(8 - count)), index))
        }
        keys.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return nameLess(names[a.index], names[b.index])
        }
        return keys.map { items[$0.index] }
    }
}
