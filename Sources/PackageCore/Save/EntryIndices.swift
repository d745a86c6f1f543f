/// Indices into a tree's entries, four bytes each: a save's lists of entries to create,
/// remove or refresh can be as long as the tree, and at a million entries `[Int]` would
/// cost twice as much for nothing (no tree holds four billion entries). A list that begins
/// with consecutive indices keeps that run as two numbers: a first save creates every
/// entry, in order, and holds nothing per entry for it.
struct EntryIndices: RandomAccessCollection, Sendable {
    /// The leading run of consecutive indices: `runStart..<runStart + runCount`.
    private var runStart = 0
    private var runCount = 0
    /// What follows the run.
    private var storage: [UInt32] = []

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { runCount + storage.count }

    subscript(position: Int) -> Int {
        precondition(position >= 0 && position < endIndex, "entry list position out of range")
        return position < runCount ? runStart + position : Int(storage[position - runCount])
    }

    mutating func append(_ index: Int) {
        let narrow = EntryIndices.narrowed(index)
        if storage.isEmpty && (runCount == 0 || index == runStart + runCount) {
            if runCount == 0 { runStart = index }
            runCount += 1
        } else {
            storage.append(narrow)
        }
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
/// each (`[Int?]` costs sixteen), and nothing until the first index is set: a first save
/// has no old entries to point at.
struct OptionalEntryIndices: Sendable {
    /// The stored value that means "none".
    static let none = UInt32.max
    /// Empty while every entry has none.
    private var storage: [UInt32] = []
    let count: Int

    /// `count` entries, none with an index.
    init(count: Int) {
        self.count = count
    }

    subscript(position: Int) -> Int? {
        get {
            precondition(position >= 0 && position < count, "entry position out of range")
            guard !storage.isEmpty else { return nil }
            let stored = storage[position]
            return stored == OptionalEntryIndices.none ? nil : Int(stored)
        }
        set {
            precondition(position >= 0 && position < count, "entry position out of range")
            guard let newValue else {
                if !storage.isEmpty { storage[position] = OptionalEntryIndices.none }
                return
            }
            if storage.isEmpty { storage = [UInt32](repeating: OptionalEntryIndices.none, count: count) }
            storage[position] = EntryIndices.narrowed(newValue)
        }
    }

    /// How many entries have an index.
    var nonNilCount: Int { storage.reduce(0) { $0 + ($1 == OptionalEntryIndices.none ? 0 : 1) } }
}
