import PackageCore

/// Resolves the archive's symbolic links as the kernel would in a tree holding only the
/// archive's entries, to refuse any that would lead out of the destination.
///
/// ".." pops a component; a component naming another link of the archive is replaced by
/// where that link leads. Each link is resolved once and remembered (its end and the number
/// of links it follows), so a thousand links through one long chain cost one walk of the
/// chain, not a thousand; a link met again while it is being resolved is a real loop.
/// Linux follows at most 40 links in one lookup (MAXSYMLINKS; ELOOP beyond): a longer chain
/// is refused as such, not called a loop.
struct LinkResolution {
    /// Where a resolution stands: a node of the tree, and how many components below it lie
    /// outside the archive's names (nothing there can be a link, only ".." leads back).
    struct Position {
        var node: Int32
        var unknownDepth: Int
    }

    private enum State {
        case resolving
        case resolved(Position, links: Int)
    }

    /// Why resolution stopped, as the refusal's reason.
    private struct Refusal: Error {
        var reason: String
    }

    /// The kernel's limit on links followed in one path lookup (MAXSYMLINKS).
    static let maximumChain = 40

    let tree: PathTree
    let entries: [ZipEntry]
    private var states: [Int32: State] = [:]

    init(tree: PathTree, entries: [ZipEntry]) {
        self.tree = tree
        self.entries = entries
    }

    /// Why following the link of entry `index` would leave the destination or fail, or nil.
    ///
    /// - Complexity: O(bytes of its target) plus, once per archive, the links it goes through.
    mutating func problem(link index: Int) -> String? {
        let node = tree.nodeOfEntry[index]
        do throws(Refusal) {
            let (_, links) = try resolve(node, nesting: 0)
            if links + 1 > Self.maximumChain { throw Self.tooLong }
            return nil
        } catch {
            return error.reason
        }
    }

    private static let tooLong = Refusal(
        reason: "the link starts a chain of more than \(maximumChain) links (the most the kernel follows: ELOOP)")

    /// Where link `node` leads, and how many links its target goes through (counting those
    /// its links go through).
    private mutating func resolve(_ node: Int32, nesting: Int) throws(Refusal) -> (Position, Int) {
        switch states[node] {
        case .resolving?:
            throw Refusal(reason: "the link's target goes round in a loop of links")
        case .resolved(let position, let links)?:
            return (position, links)
        case nil:
            break
        }
        guard nesting < Self.maximumChain else { throw Self.tooLong }
        let item = tree.nodes[Int(node)]
        let target = entries[Int(item.entry)].linkTarget ?? ""
        // Which link the message is about, when it is not the one refused.
        let through = nesting == 0 ? "" : " through the link '\(ZipError.printable(tree.path(of: node).string))'"
        if target.utf8.first == UInt8(ascii: "/") {
            throw Refusal(reason: "the link\(through.isEmpty ? " points" : " leads\(through)") to an absolute path ('\(target)')")
        }
        states[node] = .resolving
        var position = Position(node: item.parent, unknownDepth: 0)
        var links = 0
        for component in RelativePath.components(of: target) {
            if component.utf8.elementsEqual(".".utf8) { continue }
            if component.utf8.elementsEqual("..".utf8) {
                if position.unknownDepth > 0 {
                    position.unknownDepth -= 1
                } else if position.node == PathTree.root {
                    throw Refusal(reason: "the link leads outside the destination\(through) ('\(target)')")
                } else {
                    position.node = tree.nodes[Int(position.node)].parent
                }
                continue
            }
            if position.unknownDepth > 0 {
                position.unknownDepth += 1
                continue
            }
            guard let child = tree.child(of: position.node, named: String(component)) else {
                position.unknownDepth = 1
                continue
            }
            guard tree.nodes[Int(child)].kind == .symbolicLink else {
                position.node = child
                continue
            }
            let (end, followed) = try resolve(child, nesting: nesting + 1)
            links += 1 + followed
            if links + 1 > Self.maximumChain { throw Self.tooLong }
            position = end
        }
        states[node] = .resolved(position, links: links)
        return (position, links)
    }
}
