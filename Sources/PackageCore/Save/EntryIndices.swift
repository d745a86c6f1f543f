/// Indices into a tree's entries, four bytes each: a save's lists of entries to create,
/// remove or refresh can be as long as the tree, and at a million entries `[Int]` would
/// cost twice as much for nothing (no tree holds four billion entries).
struct EntryIndices: RandomAccessCollection, Sendable {
    private var storage: [UInt32] = []

    init() {}

    var startIndex: Int { storage.startIndex }
    var endIndex: Int { storage.endIndex }

    subscript(position: Int) -> Int { Int(storage[position]) }

    mutating func append(_ index: Int) {
        storage.append(EntryIndices.narrowed(index))
    }

    /// `index` in four bytes; a tree of four billion entries cannot be held in memory, so
    /// one that reaches here is a bug.
    static func narrowed(_ index: Int) -> UInt32 {
        guard let narrow = UInt32(exactly: index), narrow != OptionalEntryIndices.none else {
            preconditionFailure("entry index \(index) beyond a tree's bound")
        }
        return narrow
    }
}

/// For each entry of a tree, an index into another tree's entries or none, four bytes
/// each (`[Int?]` costs sixteen).
struct OptionalEntryIndices: Sendable {
    /// The stored value that means "none".
    static let none = UInt32.max
    private var storage: [UInt32]

    /// `count` entries, none with an index.
    init(count: Int) {
        storage = [UInt32](repeating: OptionalEntryIndices.none, count: count)
    }

    var count: Int { storage.count }

    subscript(position: Int) -> Int? {
        get {
            let stored = storage[position]
            return stored == OptionalEntryIndices.none ? nil : Int(stored)
        }
        set { storage[position] = newValue.map(EntryIndices.narrowed) ?? OptionalEntryIndices.none }
    }

    /// How many entries have an index.
    var nonNilCount: Int { storage.reduce(0) { $0 + ($1 == OptionalEntryIndices.none ? 0 : 1) } }
}
