import Testing
@testable import PackageCore

/// The plan: what a save must create, remove, re-permission and record afresh.
@Suite("SavePlan")
struct SavePlanTests {
    func paths(_ indices: some Sequence<Int>, _ snapshot: TreeSnapshot) -> [String] { indices.map { snapshot.entries[$0].path } }

    @Test("creations, removals (as subtree roots), permission changes, unchanged entries")
    func plan() {
        let old = Snapshots.make([
            ("a", .directory), ("a/x.txt", .file("x")), ("gone", .directory), ("gone/1", .file("1")),
            ("run.sh", .file("run")), ("same.txt", .file("same")), ("kind", .file("file")),
        ])
        let new = Snapshots.make([
            ("a", .directory), ("a/x.txt", .file("x, edited")), ("a/new.txt", .file("n")),
            ("run.sh", .file("run", executable: true)), ("same.txt", .file("same")), ("kind", .directory),
            ("kind/inside", .file("i")),
        ])
        let plan = SavePlan(old: old, new: new, origins: Array(repeating: nil, count: new.entries.count))
        #expect(paths(plan.creations, new) == ["a/new.txt", "a/x.txt", "kind", "kind/inside"])
        #expect(paths(plan.removals, old) == ["gone", "kind"])
        #expect(paths(plan.permissionChanges, new) == ["run.sh"])
        #expect(plan.removedEntryCount == 3)
        let unchanged = new.entries.indices.filter { plan.unchangedOld[$0] != nil }.map { new.entries[$0].path }
        #expect(unchanged == ["run.sh", "same.txt"])
        #expect(!plan.isEmpty)
        #expect(SavePlan(old: old, new: old, origins: Array(repeating: nil, count: old.entries.count)).isEmpty)
    }

    @Test("a file whose content is not known is rewritten even with an equal hash; a date alone never counts")
    func unknownContentAndDates() {
        let old = Snapshots.make([("f", .file("same"))])
        var new = old
        new.entries[0].modificationTime = 42
        #expect(SavePlan(old: old, new: new, origins: [nil]).isEmpty)
        let unknown = SavePlan(old: old, new: old, origins: [nil], unknownOldContent: ["f"])
        #expect(Array(unknown.creations) == [0])
    }

    @Test("indices in four bytes: lists and optional indices read back as stored")
    func compactIndices() {
        var list = EntryIndices()
        for index in [0, 7, 1 << 31, Int(UInt32.max) - 1] { list.append(index) }
        #expect(Array(list) == [0, 7, 1 << 31, Int(UInt32.max) - 1])
        // A leading run of consecutive indices, then anything.
        var run = EntryIndices()
        for index in [5, 6, 7, 8, 3, 9, 10] { run.append(index) }
        #expect(Array(run) == [5, 6, 7, 8, 3, 9, 10] && run.count == 7 && run[4] == 3)
        var whole = EntryIndices()
        for index in 0..<1000 { whole.append(index) }
        #expect(Array(whole) == Array(0..<1000))
        var optional = OptionalEntryIndices(count: 4)
        optional[1] = 0
        optional[2] = Int(UInt32.max) - 1
        #expect((0..<4).map { optional[$0] } == [nil, 0, Int(UInt32.max) - 1, nil])
        #expect(optional.nonNilCount == 2)
        optional[1] = nil
        #expect(optional[1] == nil && optional.nonNilCount == 1)
        var unset = OptionalEntryIndices(count: 3)
        unset[0] = nil
        #expect((0..<3).map { unset[$0] } == [nil, nil, nil] && unset.nonNilCount == 0 && unset.count == 3)
    }
}
