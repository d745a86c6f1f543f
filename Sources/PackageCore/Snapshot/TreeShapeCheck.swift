/// The one check that entries from outside, in depth-first path order, make a tree: each
/// path after the one before (so none twice), compared as bytes, and beneath a folder entry
/// that came before it, or at the top level. A link `é` does not pass for the folder
/// `e\u{301}`, though Swift's `String ==` equates them.
///
/// Used by a custom source's entries once sorted (`SourceTree.assembled(in:)`) and by a
/// remote version's manifest as it is decoded; paths themselves are checked before
/// (`RelativePath`, the remote's path rules).
package struct TreeShapeCheck {
    /// Why an entry does not fit.
    package enum Problem: Sendable, Equatable {
        /// The same bytes as the entry before.
        case repeated
        /// Before the entry before, in depth-first byte order.
        case outOfOrder
        /// Its parent is not a folder entry that came before.
        case noParentFolder(parent: String)
    }

    /// The folders that hold the last entry admitted, outermost first: in depth-first order
    /// an entry's parent, when it is a folder of the tree, is the innermost of them.
    private var open: [String] = []
    private var previous: String?

    package init() {}

    /// Admits the next entry's `path`; what is wrong with it, or nil.
    ///
    /// - Complexity: O(path length), amortised (each folder is opened and closed once).
    package mutating func admit(_ path: String) -> Problem? {
        if let previous {
            let order = PathOrder.compareBytes(previous, path, slashIsLowest: true)
            if order == 0 { return .repeated }
            if order > 0 { return .outOfOrder }
        }
        previous = path
        while let top = open.last, !PathOrder.isDescendant(path, of: top) { open.removeLast() }
        let parent = RelativePath.parent(of: path)
        guard parent.isEmpty || open.last.map({ PathOrder.sameBytes($0, parent) }) == true else {
            return .noParentFolder(parent: parent)
        }
        return nil
    }

    /// Records that the entry just admitted is a folder, which later entries may lie in.
    package mutating func admitFolder(_ path: String) { open.append(path) }
}
