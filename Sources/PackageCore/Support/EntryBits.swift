/// One bit for each entry of a tree, by index: a yes-or-no about every entry of a million
/// costs 125 KB, where a set of indices would cost about forty times as much.
struct EntryBits: Sendable {
    private var words: [UInt64]

    /// `count` bits, all clear.
    init(count: Int) {
        words = [UInt64](repeating: 0, count: (count + 63) / 64)
    }

    /// `count` bits, those of `indices` set: an index set as long as a tree, at a bit each.
    init(count: Int, setting indices: some Sequence<Int>) {
        self.init(count: count)
        for index in indices { insert(index) }
    }

    mutating func insert(_ index: Int) {
        words[index >> 6] |= 1 << UInt64(index & 63)
    }

    mutating func remove(_ index: Int) {
        words[index >> 6] &= ~(1 << UInt64(index & 63))
    }

    func contains(_ index: Int) -> Bool {
        words[index >> 6] & (1 << UInt64(index & 63)) != 0
    }
}
