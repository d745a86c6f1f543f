import PackageCore

/// The archive's paths as a tree of components: every entry's node, and a node for every
/// directory a deeper entry implies.
///
/// Finding an entry's parent, checking what lies above it (a file, a link) and walking the
/// tree depth first cost time linear in the bytes of the names, never a string per
/// ancestor: 2,047 nested directories are as cheap as 2,047 siblings (issue 17 measured
/// entries × depth² before). A child is found by hashing (parent, component) into an
/// open-addressing table; `Hasher` is seeded per process, so an archive cannot be crafted
/// to make every lookup collide.
///
/// Node 0 is the root (the destination directory). Built once by `ZipArchive.open`
/// (`ArchiveParser.checkPaths`) and kept with the archive.
struct PathTree: Sendable {
    struct Node: Sendable {
        var parent: Int32
        /// The component's bytes: `names[nameStart ..< nameStart + nameLength]`.
        var nameStart: Int32
        var nameLength: Int32
        /// Components from the root: 1 for a top-level name.
        var depth: Int32
        var kind: FileKind
        /// The entry's index in the archive's entries, or -1 for an implied directory
        /// (and the root).
        var entry: Int32
        /// The first entry that went through this node: for messages about an implied
        /// directory ("'a/b' lies beneath 'a', which is a file").
        var firstUser: Int32
        var firstChild: Int32 = -1
        var nextSibling: Int32 = -1
        var hash: Int
    }

    /// What `insert` found.
    enum Outcome: Equatable {
        case inserted(Int32)
        /// The path is already an entry: this one's index.
        case duplicate(existingEntry: Int32)
        /// Entry `entry` lies beneath `ancestor`, which is a file or a link.
        case beneath(entry: Int32, ancestor: Int32)
        /// More nodes (entries and implied directories) than the limit.
        case tooMany
    }

    private(set) var nodes: [Node]
    private var names: [UInt8] = []
    /// Open addressing: node indices, -1 when free; the capacity is a power of two.
    private var table: [Int32]
    /// The node of each entry, by entry index.
    private(set) var nodeOfEntry: [Int32]
    /// The last path inserted, its components' nodes and where each component ends.
    private var recentPath: [UInt8] = []
    private var recentNodes: [Int32] = []
    private var recentEnds: [Int] = []

    init(expectedEntries: Int) {
        nodes = [Node(parent: -1, nameStart: 0, nameLength: 0, depth: 0, kind: .directory, entry: -1, firstUser: -1, hash: 0)]
        nodes.reserveCapacity(expectedEntries + 1)
        var capacity = 16
        while capacity < 2 * (expectedEntries + 1) { capacity <<= 1 }
        table = [Int32](repeating: -1, count: capacity)
        nodeOfEntry = [Int32](repeating: -1, count: expectedEntries)
    }

    static let root: Int32 = 0

    // MARK: Building

    /// Adds entry `index` at `path`, creating the implied directories above it. Components
    /// are found and told apart by their bytes.
    ///
    /// The components `path` shares with the previous path inserted are not looked up
    /// again: archives list a directory's contents together, so most of a deep path is
    /// usually the previous one's.
    ///
    /// - Complexity: O(bytes of `path`) expected.
    mutating func insert(entry index: Int, path: RelativePath, kind: FileKind, maximumNodes: Int) -> Outcome {
        var text = path.string
        return text.withUTF8 { bytes in
            var node = Self.root
            var start = 0
            // The previous path's components that this one shares, as whole components.
            let shared = Self.commonPrefix(bytes, recentPath)
            var chain: [Int32] = []
            var ends: [Int] = []
            for (position, end) in recentEnds.enumerated() {
                guard end <= shared, end < bytes.count, bytes[end] == UInt8(ascii: "/") else { break }
                let reused = recentNodes[position]
                guard nodes[Int(reused)].kind == .directory else { return .beneath(entry: Int32(index), ancestor: reused) }
                node = reused
                chain.append(reused)
                ends.append(end)
                start = end + 1
            }
            defer {
                recentPath = Array(bytes)
                recentNodes = chain
                recentEnds = ends
            }
            for end in start...bytes.count where end == bytes.count || bytes[end] == UInt8(ascii: "/") {
                let component = UnsafeBufferPointer(rebasing: bytes[start..<end])
                let isLast = end == bytes.count
                start = end + 1
                let hash = Self.hash(parent: node, component)
                if let child = find(parent: node, component, hash: hash) {
                    if isLast {
                        if nodes[Int(child)].entry >= 0 { return .duplicate(existingEntry: nodes[Int(child)].entry) }
                        // An implied directory: a directory entry makes it explicit; a file or
                        // link there would have the entries beneath it under a non-directory.
                        guard kind == .directory else { return .beneath(entry: nodes[Int(child)].firstUser, ancestor: child) }
                        nodes[Int(child)].entry = Int32(index)
                        nodeOfEntry[index] = child
                        chain.append(child)
                        ends.append(end)
                        return .inserted(child)
                    }
                    guard nodes[Int(child)].kind == .directory else { return .beneath(entry: Int32(index), ancestor: child) }
                    node = child
                    chain.append(child)
                    ends.append(end)
                } else {
                    guard nodes.count - 1 < maximumNodes else { return .tooMany }
                    node = add(
                        parent: node, component, hash: hash, kind: isLast ? kind : .directory,
                        entry: isLast ? Int32(index) : -1, user: Int32(index))
                    chain.append(node)
                    ends.append(end)
                    if isLast {
                        nodeOfEntry[index] = node
                        return .inserted(node)
                    }
                }
            }
            return .inserted(node)  // unreachable: the last component returns above
        }
    }

    /// The number of leading bytes `a` and `b` have in common.
    private static func commonPrefix(_ a: UnsafeBufferPointer<UInt8>, _ b: [UInt8]) -> Int {
        b.withUnsafeBufferPointer { b in
            let limit = min(a.count, b.count)
            var index = 0
            while index < limit && a[index] == b[index] { index += 1 }
            return index
        }
    }

    private mutating func add(
        parent: Int32, _ component: UnsafeBufferPointer<UInt8>, hash: Int, kind: FileKind, entry: Int32, user: Int32
    ) -> Int32 {
        let index = Int32(nodes.count)
        nodes.append(
            Node(
                parent: parent, nameStart: Int32(names.count), nameLength: Int32(component.count),
                depth: nodes[Int(parent)].depth + 1, kind: kind, entry: entry, firstUser: user,
                nextSibling: nodes[Int(parent)].firstChild, hash: hash))
        names.append(contentsOf: component)
        nodes[Int(parent)].firstChild = index
        if nodes.count * 2 > table.count { grow() } else { place(index, hash: hash) }
        return index
    }

    private mutating func place(_ node: Int32, hash: Int) {
        let mask = table.count - 1
        var slot = hash & mask
        while table[slot] >= 0 { slot = (slot + 1) & mask }
        table[slot] = node
    }

    private mutating func grow() {
        table = [Int32](repeating: -1, count: table.count * 2)
        for index in 1..<nodes.count { place(Int32(index), hash: nodes[index].hash) }
    }

    private static func hash(parent: Int32, _ component: UnsafeBufferPointer<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(parent)
        hasher.combine(bytes: UnsafeRawBufferPointer(component))
        return hasher.finalize()
    }

    // MARK: Queries

    private func find(parent: Int32, _ component: UnsafeBufferPointer<UInt8>, hash: Int) -> Int32? {
        let mask = table.count - 1
        var slot = hash & mask
        while true {
            let candidate = table[slot]
            if candidate < 0 { return nil }
            let node = nodes[Int(candidate)]
            if node.hash == hash, node.parent == parent, Int(node.nameLength) == component.count,
                names.withUnsafeBufferPointer({ all in
                    UnsafeBufferPointer(rebasing: all[Int(node.nameStart)..<Int(node.nameStart + node.nameLength)])
                        .elementsEqual(component)
                })
            {
                return candidate
            }
            slot = (slot + 1) & mask
        }
    }

    /// The child of `parent` named `component`, if the archive has one.
    func child(of parent: Int32, named component: UnsafeBufferPointer<UInt8>) -> Int32? {
        find(parent: parent, component, hash: Self.hash(parent: parent, component))
    }

    func child(of parent: Int32, named component: String) -> Int32? {
        var component = component
        return component.withUTF8 { child(of: parent, named: $0) }
    }

    /// The node's own name (one component).
    func name(of node: Int32) -> String {
        let item = nodes[Int(node)]
        return String(decoding: names[Int(item.nameStart)..<Int(item.nameStart + item.nameLength)], as: UTF8.self)
    }

    /// The node's path from the root ("a/b/c"; the root's is empty).
    ///
    /// - Complexity: O(depth + bytes of the path).
    func path(of node: Int32) -> RelativePath {
        var chain: [Int32] = []
        var current = node
        while current > 0 {
            chain.append(current)
            current = nodes[Int(current)].parent
        }
        var bytes: [UInt8] = []
        for item in chain.reversed() {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "/")) }
            let entry = nodes[Int(item)]
            bytes += names[Int(entry.nameStart)..<Int(entry.nameStart + entry.nameLength)]
        }
        // The components are the bytes of checked paths: joined, they are one too.
        return RelativePath(trusted: String(decoding: bytes, as: UTF8.self))
    }

    /// The path of `node` relative to its ancestor `ancestor` ("c/d").
    func path(of node: Int32, below ancestor: Int32) -> String {
        var components: [String] = []
        var current = node
        while current != ancestor && current > 0 {
            components.append(name(of: current))
            current = nodes[Int(current)].parent
        }
        return components.reversed().joined(separator: "/")
    }

    /// The children of `node`, in no particular order.
    func children(of node: Int32) -> [Int32] {
        var result: [Int32] = []
        var child = nodes[Int(node)].firstChild
        while child >= 0 {
            result.append(child)
            child = nodes[Int(child)].nextSibling
        }
        return result
    }

    /// The directories below the root, each before its contents (depth first).
    ///
    /// - Complexity: O(nodes).
    func directoriesInPreorder() -> [Int32] {
        var order: [Int32] = []
        var pending: [Int32] = children(of: Self.root).filter { nodes[Int($0)].kind == .directory }
        while let node = pending.popLast() {
            order.append(node)
            var child = nodes[Int(node)].firstChild
            while child >= 0 {
                if nodes[Int(child)].kind == .directory { pending.append(child) }
                child = nodes[Int(child)].nextSibling
            }
        }
        return order
    }

    /// The implied directories (no entry of their own), for snapshots.
    var impliedDirectories: [Int32] {
        (1..<nodes.count).compactMap { nodes[$0].entry < 0 && nodes[$0].kind == .directory ? Int32($0) : nil }
    }
}
