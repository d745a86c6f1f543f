import Observation
import Synchronization
import Testing
@testable import PackageCore

/// A function that reports progress the SF-0023 way: it takes a `Subprogress`.
func copyChunks(_ count: Int, progress: consuming Subprogress) {
    let manager = progress.start(totalCount: count)
    for _ in 0..<count { manager.complete(count: 1) }
}

/// The optional form SF-0023's examples use for callers that may not want progress.
func copyChunksOptionally(_ count: Int, progress: consuming Subprogress? = nil) {
    let manager = progress?.start(totalCount: count)
    for _ in 0..<count { manager?.complete(count: 1) }
}

@Suite("Progress")
struct ProgressTests {
    @Test("a manager counts units to its total")
    func counting() {
        let manager = ProgressManager(totalCount: 4)
        #expect(manager.fractionCompleted == 0 && !manager.isFinished && !manager.isIndeterminate)
        manager.complete(count: 1)
        #expect(manager.completedCount == 1 && manager.fractionCompleted == 0.25)
        manager.complete(count: 3)
        #expect(manager.isFinished && manager.fractionCompleted == 1)
        manager.complete(count: 1)
        #expect(manager.completedCount == 5 && manager.fractionCompleted == 1)
        #expect(manager.description == "5 of 4 (100%)")
    }

    @Test("indeterminate until a total is set; a total of 0 is finished at once")
    func indeterminate() {
        let manager = ProgressManager(totalCount: nil)
        #expect(manager.isIndeterminate && manager.fractionCompleted == 0 && !manager.isFinished)
        manager.complete(count: 3)
        manager.withProperties { $0.totalCount = 6 }
        #expect(manager.fractionCompleted == 0.5)
        let empty = ProgressManager(totalCount: 0)
        #expect(empty.isFinished && empty.fractionCompleted == 1)

        let parent = ProgressManager(totalCount: 2)
        let nothing = parent.subprogress(assigningCount: 1).start(totalCount: 0)
        #expect(nothing.isFinished)
        #expect(parent.completedCount == 1 && parent.fractionCompleted == 0.5)
    }

    @Test("children move their parent in proportion to the units assigned to them")
    func nestedFractions() {
        let root = ProgressManager(totalCount: 10)
        let big = root.subprogress(assigningCount: 6).start(totalCount: 4)
        let small = root.subprogress(assigningCount: 2).start(totalCount: 2)
        big.complete(count: 1)
        #expect(root.fractionCompleted == 0.15)  // 6/10 × 1/4
        let grandchild = big.subprogress(assigningCount: 2).start(totalCount: 5)
        grandchild.complete(count: 5)  // finishes: 2 of big's 4 units
        #expect(big.completedCount == 3 && big.fractionCompleted == 0.75)
        #expect(abs(root.fractionCompleted - 0.45) < 1e-12)
        small.complete(count: 1)
        #expect(abs(root.fractionCompleted - 0.55) < 1e-12)
        root.complete(count: 2)
        big.complete(count: 1)
        small.complete(count: 1)
        #expect(root.isFinished && root.completedCount == 10 && root.fractionCompleted == 1)
    }

    @Test("a Subprogress dropped without start, or a manager dropped unfinished, completes its share")
    func droppedShares() {
        let root = ProgressManager(totalCount: 4)
        do {
            let unused = root.subprogress(assigningCount: 1)
            _ = consume unused
        }
        #expect(root.completedCount == 1 && root.fractionCompleted == 0.25)
        do {
            let abandoned = root.subprogress(assigningCount: 2).start(totalCount: 100)
            abandoned.complete(count: 10)
            #expect(abs(root.fractionCompleted - 0.3) < 1e-12)
        }
        #expect(root.completedCount == 3 && root.fractionCompleted == 0.75)
        copyChunks(7, progress: root.subprogress(assigningCount: 1))
        #expect(root.isFinished && root.fractionCompleted == 1)

        let other = ProgressManager(totalCount: 2)
        copyChunksOptionally(3, progress: other.subprogress(assigningCount: 1))
        copyChunksOptionally(3)
        #expect(other.completedCount == 1)
    }

    @Test("byte and file counts: per manager, and summed over a subtree including finished children")
    func byteCounts() {
        let root = ProgressManager(totalCount: 2)
        root.totalFileCount = 2
        do {
            let first = root.subprogress(assigningCount: 1).start(totalCount: 2)
            first.totalByteCount = 2 << 20
            first.completedByteCount += 1 << 20
            first.complete(count: 1)
            first.completedByteCount += 1 << 20
            first.complete(count: 1)
        }
        root.completedFileCount += 1
        let second = root.subprogress(assigningCount: 1).start(totalCount: 1)
        second.withProperties { values in
            values.totalByteCount = 10
            values.completedByteCount = 4
        }
        #expect(root.totalByteCount == 0)
        #expect(root.summary(of: ProgressManager.Properties.TotalByteCount.self) == (2 << 20) + 10)
        #expect(root.summary(of: ProgressManager.Properties.CompletedByteCount.self) == (2 << 20) + 4)
        #expect(root.summary(of: ProgressManager.Properties.TotalFileCount.self) == 2)
        #expect(root.summary(of: ProgressManager.Properties.CompletedFileCount.self) == 1)
        #expect(second.debugDescription == "ProgressManager(0 of 1 (0%), bytes 4/10, files 0/0)")
    }

    @Test("observers in another task see every change, fractions never go back, and the end is 1")
    func concurrentObservation() async {
        let root = ProgressManager(totalCount: 4)
        let finished = Atomic<Bool>(false)
        let observer = Task.detached { () -> (Int, Bool) in
            var readings = 0
            var last = 0.0
            var monotonic = true
            while !finished.load(ordering: .acquiring) {
                let fraction = root.fractionCompleted
                if fraction < last { monotonic = false }
                last = fraction
                readings += 1
                await Task.yield()
            }
            return (readings, monotonic && root.fractionCompleted == 1)
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                // A Subprogress cannot be captured by an escaping closure (it is consumed
                // once); the task gets the manager it starts, which is Sendable.
                let manager = root.subprogress(assigningCount: 1).start(totalCount: 500)
                group.addTask {
                    for _ in 0..<500 {
                        manager.complete(count: 1)
                        manager.completedByteCount += 1
                    }
                }
            }
        }
        finished.store(true, ordering: .releasing)
        let (readings, consistent) = await observer.value
        #expect(readings > 0)
        #expect(consistent)
        #expect(root.isFinished && root.completedCount == 4)
        #expect(root.summary(of: ProgressManager.Properties.CompletedByteCount.self) == 2000)
    }

    @Test("Observation: a change in a child notifies observers of its ancestors")
    func observation() {
        let root = ProgressManager(totalCount: 2)
        let child = root.subprogress(assigningCount: 1).start(totalCount: 2)
        let notified = Atomic<Int>(0)
        withObservationTracking {
            _ = root.fractionCompleted
        } onChange: {
            notified.add(1, ordering: .relaxed)
        }
        child.complete(count: 1)
        #expect(notified.load(ordering: .relaxed) == 1)
        #expect(root.fractionCompleted == 0.25)
    }
}
