/// The one walk of two path-sorted sequences side by side: the save plan, the differ, the
/// comparison of an edited tree with the disk, and the manifest's delta folds all merge
/// this way, so they agree on what "the same path" and "comes first" mean.
extension PathOrder {
    /// Where the merge stands: an element only on the left, only on the right, or on both
    /// (equal keys).
    package enum MergeStep: Equatable {
        case left(Int)
        case right(Int)
        case both(Int, Int)
    }

    /// Walks `leftCount` and `rightCount` elements sorted in one order, calling `visit` for
    /// each step. `compare(i, j)` orders left element `i` against right element `j` (-1, 0,
    /// 1). `visit` returns how far to move on each side: one element, or a whole subtree's
    /// span to skip it (only the side(s) the step names may move).
    ///
    /// - Complexity: O(left + right) calls of `compare` and `visit`.
    package static func mergeJoin(
        leftCount: Int, rightCount: Int, compare: (Int, Int) -> Int,
        _ visit: (MergeStep) throws -> (left: Int, right: Int)
    ) rethrows {
        var i = 0
        var j = 0
        while i < leftCount || j < rightCount {
            let step: MergeStep
            if j == rightCount {
                step = .left(i)
            } else if i == leftCount {
                step = .right(j)
            } else {
                let order = compare(i, j)
                step = order < 0 ? .left(i) : order > 0 ? .right(j) : .both(i, j)
            }
            let advance = try visit(step)
            switch step {
            case .left: i += max(1, advance.left)
            case .right: j += max(1, advance.right)
            case .both:
                i += max(1, advance.left)
                j += max(1, advance.right)
            }
        }
    }

    /// `mergeJoin` of two arrays sorted in depth-first path order (`pathLess`).
    package static func mergeJoin<Left, Right>(
        _ left: [Left], _ right: [Right], leftPath: (Left) -> String, rightPath: (Right) -> String,
        _ visit: (MergeStep) throws -> (left: Int, right: Int)
    ) rethrows {
        try mergeJoin(
            leftCount: left.count, rightCount: right.count,
            compare: { compareBytes(leftPath(left[$0]), rightPath(right[$1]), slashIsLowest: true) }, visit)
    }

    /// `mergeJoin` of two arrays of one type sorted in depth-first path order.
    package static func mergeJoin<Element>(
        _ left: [Element], _ right: [Element], path: (Element) -> String,
        _ visit: (MergeStep) throws -> (left: Int, right: Int)
    ) rethrows {
        try mergeJoin(left, right, leftPath: path, rightPath: path, visit)
    }

    /// `mergeJoin` of two trees' entries in depth-first path order, compared as stored
    /// (`SnapshotEntry.comparePaths`: no path string built per step).
    package static func mergeJoin(
        _ left: [SnapshotEntry], _ right: [SnapshotEntry], _ visit: (MergeStep) throws -> (left: Int, right: Int)
    ) rethrows {
        try mergeJoin(
            leftCount: left.count, rightCount: right.count,
            compare: { SnapshotEntry.comparePaths(left[$0], right[$1]) }, visit)
    }
}
