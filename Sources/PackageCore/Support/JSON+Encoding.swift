/// `Encodable` values as `JSON`: so that what pkgtool writes from a `Codable` type (the
/// remote's `HEAD`, the benchmark's record) goes through the one writer, its keys the same
/// ones `JSONDecoder` reads back.
extension JSON {
    /// How keys are spelled.
    package enum KeyStyle: Sendable {
        /// As the coding keys say.
        case asIs
        /// `bytesWritten` → `bytes_written`, as `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`
        /// spells them (the keys of a `[String: …]` dictionary stay as they are, as there);
        /// `JSONDecoder`'s `.convertFromSnakeCase` reads them back.
        case snakeCase
    }

    /// `value` as JSON: objects with their keys in byte order (what `JSONEncoder`'s
    /// `.sortedKeys` gives for ASCII keys), nil optionals left out (`encodeIfPresent`).
    ///
    /// - Throws: `EncodingError.invalidValue` for a number that is not finite (as
    ///   `JSONEncoder` does), or what `value`'s own `encode(to:)` throws.
    package init<Value: Encodable>(encoding value: Value, keys: KeyStyle = .asIs) throws {
        let root = JSONNode()
        try value.encode(to: JSONNodeEncoder(node: root, keys: keys, codingPath: []))
        self = root.json
    }
}

/// What one value has become so far; containers fill it in as the value encodes itself.
/// A class, so that members and elements grow in place.
private final class JSONNode {
    enum Kind { case unset, value, object, array }

    private(set) var kind = Kind.unset
    private var value = JSON.null
    /// Members in the order encoded; keys compared as bytes (not `String ==`, which would
    /// merge canonically equivalent keys).
    private var members: [(key: String, node: JSONNode)] = []
    private var elements: [JSONNode] = []

    var json: JSON {
        switch kind {
        case .unset: return .object([])  // a value that opened no container: JSONEncoder writes {}
        case .value: return value
        case .array: return .array(elements.map(\.json))
        case .object:
            let ordered = members.sorted { PathOrder.compareBytes($0.key, $1.key, slashIsLowest: false) < 0 }
            return .object(ordered.map { ($0.key, $0.node.json) })
        }
    }

    var count: Int { kind == .array ? elements.count : members.count }

    func set(_ json: JSON) {
        kind = .value
        value = json
    }

    func makeObject() {
        if kind != .object { (kind, members) = (.object, []) }
    }

    func makeArray() {
        if kind != .array { (kind, elements) = (.array, []) }
    }

    /// A new member `key` of this object (encoded again, the last value wins, as in JSONEncoder).
    func member(_ key: String) -> JSONNode {
        makeObject()
        let node = JSONNode()
        if let index = members.firstIndex(where: { PathOrder.sameBytes($0.key, key) }) {
            members[index].node = node
        } else {
            members.append((key, node))
        }
        return node
    }

    /// A new last element of this array.
    func append() -> JSONNode {
        makeArray()
        let node = JSONNode()
        elements.append(node)
        return node
    }
}

/// The scalars every container writes the same way.
private func scalar<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws -> JSON? {
    switch value {
    case let value as Bool: return .bool(value)
    case let value as String: return .string(value)
    case let value as Int: return .int(Int64(value))
    case let value as Int8: return .int(Int64(value))
    case let value as Int16: return .int(Int64(value))
    case let value as Int32: return .int(Int64(value))
    case let value as Int64: return .int(value)
    case let value as UInt: return .unsigned(UInt64(value))
    case let value as UInt8: return .int(Int64(value))
    case let value as UInt16: return .int(Int64(value))
    case let value as UInt32: return .int(Int64(value))
    case let value as UInt64: return value <= UInt64(Int64.max) ? .int(Int64(value)) : .unsigned(value)
    case let value as Float: return try finite(Double(value), codingPath)
    case let value as Double: return try finite(value, codingPath)
    default: return nil
    }
}

private func finite(_ value: Double, _ codingPath: [any CodingKey]) throws -> JSON {
    guard value.isFinite else {
        throw EncodingError.invalidValue(
            value, EncodingError.Context(codingPath: codingPath, debugDescription: "\(value) is not a JSON number"))
    }
    return .double(value)
}

/// Encodes `value` into `node`: a scalar directly, anything else through its `encode(to:)`.
private func encodeValue<T: Encodable>(
    _ value: T, into node: JSONNode, keys: JSON.KeyStyle, codingPath: [any CodingKey]
) throws {
    if let json = try scalar(value, codingPath: codingPath) {
        node.set(json)
    } else if let dictionary = value as? any StringKeyedDictionary {
        try dictionary.encodeMembers(into: node, keys: keys, codingPath: codingPath)
    } else {
        try value.encode(to: JSONNodeEncoder(node: node, keys: keys, codingPath: codingPath))
    }
}

/// A `[String: …]` dictionary: its keys are data, not coding keys, so no key style applies
/// to them (as in `JSONEncoder`).
private protocol StringKeyedDictionary {
    func encodeMembers(into node: JSONNode, keys: JSON.KeyStyle, codingPath: [any CodingKey]) throws
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Encodable {
    fileprivate func encodeMembers(into node: JSONNode, keys: JSON.KeyStyle, codingPath: [any CodingKey]) throws {
        node.makeObject()
        for (key, value) in self {
            try encodeValue(value, into: node.member(key), keys: keys, codingPath: codingPath)
        }
    }
}

private struct JSONNodeEncoder: Encoder {
    let node: JSONNode
    let keys: JSON.KeyStyle
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.makeObject()
        return KeyedEncodingContainer(KeyedJSONContainer<Key>(node: node, keys: keys, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.makeArray()
        return UnkeyedJSONContainer(node: node, keys: keys, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleJSONContainer(node: node, keys: keys, codingPath: codingPath)
    }
}

private struct KeyedJSONContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONNode
    let keys: JSON.KeyStyle
    let codingPath: [any CodingKey]

    private func name(_ key: Key) -> String {
        keys == .snakeCase ? JSONKeyCase.snakeCase(key.stringValue) : key.stringValue
    }

    mutating func encodeNil(forKey key: Key) throws { node.member(name(key)).set(.null) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encodeValue(value, into: node.member(name(key)), keys: keys, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = node.member(name(key))
        child.makeObject()
        return KeyedEncodingContainer(KeyedJSONContainer<NestedKey>(node: child, keys: keys, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.member(name(key))
        child.makeArray()
        return UnkeyedJSONContainer(node: child, keys: keys, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        JSONNodeEncoder(node: node.member("super"), keys: keys, codingPath: codingPath)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        JSONNodeEncoder(node: node.member(name(key)), keys: keys, codingPath: codingPath + [key])
    }
}

private struct UnkeyedJSONContainer: UnkeyedEncodingContainer {
    let node: JSONNode
    let keys: JSON.KeyStyle
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.append().set(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encodeValue(value, into: node.append(), keys: keys, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let child = node.append()
        child.makeObject()
        return KeyedEncodingContainer(KeyedJSONContainer<NestedKey>(node: child, keys: keys, codingPath: codingPath))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let child = node.append()
        child.makeArray()
        return UnkeyedJSONContainer(node: child, keys: keys, codingPath: codingPath)
    }

    mutating func superEncoder() -> any Encoder { JSONNodeEncoder(node: node.append(), keys: keys, codingPath: codingPath) }
}

private struct SingleJSONContainer: SingleValueEncodingContainer {
    let node: JSONNode
    let keys: JSON.KeyStyle
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.set(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encodeValue(value, into: node, keys: keys, codingPath: codingPath)
    }
}

/// Foundation's snake-case conversion of a key, for `JSON.KeyStyle.snakeCase`.
enum JSONKeyCase {
    /// `bytesWritten` → `bytes_written`, `peakRSSBytes` → `peak_rss_bytes`, with Foundation's
    /// rules to the letter (its quirks too: `URL` → `u_rl`), so that a key is spelled as
    /// `JSONEncoder` spelled it: the first letter never starts a word; each capital after it
    /// does, a run of capitals followed by a lower-case letter is one word up to the capital
    /// before that letter; words are lower-cased and joined by underscores; leading and
    /// trailing underscores are kept as they are.
    static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        guard let first = characters.firstIndex(where: { $0 != "_" }) else { return key }
        let end = characters.lastIndex(where: { $0 != "_" })! + 1
        func next(from start: Int, _ test: (Character) -> Bool) -> Int? { (start..<end).first { test(characters[$0]) } }
        var words: [Range<Int>] = []
        var wordStart = first
        var searchStart = first + 1
        while let upper = next(from: searchStart, \.isUppercase) {
            words.append(wordStart..<upper)
            guard let lower = next(from: upper, \.isLowercase) else {
                wordStart = upper
                break
            }
            if lower == upper + 1 {
                wordStart = upper
            } else {
                words.append(upper..<(lower - 1))
                wordStart = lower - 1
            }
            searchStart = lower + 1
        }
        words.append(wordStart..<end)
        let body = words.map { String(characters[$0]).lowercased() }.joined(separator: "_")
        return String(characters[..<first]) + body + String(characters[end...])
    }
}
