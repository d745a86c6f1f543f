/// A child's name inside a directory wrapper, equal and hashed by its UTF-8 bytes.
///
/// Swift's `String ==` follows Unicode canonical equivalence, so "é" precomposed and "é"
/// decomposed would be one dictionary key although Linux file systems hold them as two
/// different files. Directory wrappers key their children by this type instead, so every
/// name read from disk keeps its own child and is written back byte for byte.
struct FileName: Hashable, Sendable {
    let string: String

    init(_ string: String) { self.string = string }

    static func == (lhs: FileName, rhs: FileName) -> Bool {
        PathOrder.sameBytes(lhs.string, rhs.string)
    }

    func hash(into hasher: inout Hasher) {
        var copy = string
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether a name can be a directory entry: not empty, not "." or "..", no "/" and no NUL.
    static func isValid(_ name: String) -> Bool {
        if name.isEmpty || name == "." || name == ".." { return false }
        return !name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 })
    }

    /// `name` made usable as a directory entry: "/" and NUL become "_", and an empty
    /// name, "." or ".." gets a "_" in front. Valid names come back unchanged.
    static func sanitized(_ name: String) -> String {
        if isValid(name) { return name }
        let repaired = String(
            decoding: name.utf8.map { $0 == UInt8(ascii: "/") || $0 == 0 ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
        return isValid(repaired) ? repaired : "_" + repaired
    }
}
