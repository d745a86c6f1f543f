/// The conflict versions a package keeps until they are resolved, as its
/// `.pkgtool/conflicts/list` records them (Specs/remote.md, "Conflict versions").
///
/// A merge keeps one side's version of a conflicting path in the tree (local's, or other's
/// where local deleted what other changed); the side it did not keep becomes a *conflict
/// version*: one `ConflictVersion` per entry (a directory's subtree is one per entry
/// beneath it), whose file bytes sit in the same folder, named by content
/// (`ConflictStore`). Nothing is lost, and nothing blocks: the list rides along until
/// `resolve` removes entries.
///
/// The file is package metadata, so hostile input: `decode` accepts exactly what `encoded`
/// writes, every field checked, at most `limit` bytes and `maximumCount` entries.
public struct ConflictList: Sendable, Equatable {
    /// The conflict versions, in path order (by bytes), then side.
    public var versions: [ConflictVersion]
    /// The base versions of the conflicts (side `base`): what both sides last shared at a
    /// conflicting path, kept for an app to merge from or show (a sync knows it; another
    /// local writer does not). Not conflicts themselves: they go with the conflict they
    /// belong to.
    public var bases: [ConflictVersion]

    /// The largest record read or written.
    package static let limit = 16 << 20
    /// The most conflict versions one record holds.
    package static let maximumCount = 100_000
    static let magicLine = "pkgtool-conflicts 1"
    /// The first line of a record that holds base versions (format 1 readers refuse it
    /// whole rather than misread a `base` line).
    static let magicLineWithBases = "pkgtool-conflicts 2"

    /// A list of `versions` (base versions among them go to `bases`), sorted.
    public init(_ versions: [ConflictVersion] = []) {
        self.versions = versions.filter { $0.side != .base }.sorted(by: ConflictVersion.ordered)
        bases = versions.filter { $0.side == .base }.sorted(by: ConflictVersion.ordered)
    }

    /// Every line of the record: the conflict versions, then the base versions.
    var lines: [ConflictVersion] { versions + bases }

    /// Whether no conflict is left.
    public var isEmpty: Bool { versions.isEmpty }

    /// The list with `added` joined in; a version already listed (same path, side, entry)
    /// is listed once.
    public func adding(_ added: [ConflictVersion]) -> ConflictList {
        var all = lines
        for version in added where !all.contains(where: { $0.sameVersion(as: version) }) { all.append(version) }
        return ConflictList(all)
    }

    /// The list without the versions at `path` or beneath it, their base versions included.
    public func removing(under path: RelativePath) -> ConflictList {
        ConflictList(lines.filter { !ConflictVersion.isSameOrBeneath($0.path, path) })
    }

    /// The base version at `path`: what both sides last shared there, when it was kept.
    public func base(at path: RelativePath) -> ConflictVersion? {
        bases.first { PathOrder.sameBytes($0.path.string, path.string) }
    }

    /// The versions at `path` or beneath it (by bytes).
    public func versions(under path: RelativePath) -> [ConflictVersion] {
        versions.filter { ConflictVersion.isSameOrBeneath($0.path, path) }
    }

    /// The record's bytes.
    public func encoded() -> [UInt8] {
        var text = (bases.isEmpty ? Self.magicLine : Self.magicLineWithBases) + "\n"
        for version in lines { text += version.line + "\n" }
        return Array(text.utf8)
    }

    /// Decodes a record, or throws a `ConflictListRefusal` saying in a few words why the
    /// bytes are none.
    public static func decode(_ bytes: [UInt8]) throws(ConflictListRefusal) -> ConflictList {
        guard bytes.count <= limit else { throw ConflictListRefusal("it is larger than \(limit) bytes") }
        guard bytes.last == UInt8(ascii: "\n") else { throw ConflictListRefusal("it does not end with a newline") }
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        guard let first = lines.first, first.elementsEqual(magicLine.utf8) || first.elementsEqual(magicLineWithBases.utf8)
        else {
            throw ConflictListRefusal("it is not a pkgtool conflicts record of format 1 or 2")
        }
        let basesAllowed = first.elementsEqual(magicLineWithBases.utf8)
        guard lines.count - 1 <= maximumCount else { throw ConflictListRefusal("it lists more than \(maximumCount) versions") }
        var versions: [ConflictVersion] = []
        for (number, line) in lines.dropFirst().enumerated() {
            guard let version = ConflictVersion(line: Array(line)), basesAllowed || version.side != .base else {
                throw ConflictListRefusal("its line \(number + 2) is not a conflict version")
            }
            versions.append(version)
        }
        // Conflict versions in order, then base versions in order (`encoded`'s layout).
        let split = versions.firstIndex { $0.side == .base } ?? versions.endIndex
        guard !versions[split...].contains(where: { $0.side != .base }) else {
            throw ConflictListRefusal("its base versions are not after its conflict versions")
        }
        guard !basesAllowed || split < versions.endIndex else {
            throw ConflictListRefusal("it is of format 2 without a base version")
        }
        for group in [versions[..<split], versions[split...]] {
            for (a, b) in zip(group, group.dropFirst()) where !ConflictVersion.ordered(a, b) {
                throw ConflictListRefusal("its versions are not in order")
            }
        }
        return ConflictList(versions)
    }
}

/// Why bytes are not a conflicts record.
public struct ConflictListRefusal: Error, Equatable, CustomStringConvertible {
    /// A few words: "its line 3 is not a conflict version".
    public var reason: String
    init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// One kept version of a conflicting path: the side a merge did not keep in the tree.
public struct ConflictVersion: Sendable, Hashable {
    /// Which side of the merge this version was.
    public enum Side: String, Sendable, Hashable, CaseIterable {
        /// This package's version (kept here when the tree took the other side's).
        case local
        /// The other side's version: the remote's, for a sync.
        case other
        /// What both sides last shared at the path (`ConflictList.bases`), for a merge.
        case base
    }

    /// What the version was at its path.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case file, directory, link
        /// The side deleted the path: nothing to restore but the deletion.
        case deleted
    }

    /// The path, by its bytes.
    public var path: RelativePath
    public var side: Side
    public var kind: Kind
    /// Permission bits (`0o7777`); 0 for a deletion.
    public var permissions: UInt32
    /// Bytes of a file or a link's target; 0 otherwise.
    public var size: Int64
    /// The content hash as `pkgtool hash` prints it (a directory's Merkle hash); zero for a deletion.
    public var hash: ContentHash
    /// A link's target.
    public var linkTarget: String?
    /// The version of the remote it came from (64 hex digits), or its base for a local version.
    public var remoteVersion: String
    /// When the merge kept it, nanoseconds since the epoch.
    public var time: Int64

    /// A conflict version with every field given.
    public init(
        path: RelativePath, side: Side, kind: Kind, permissions: UInt32, size: Int64, hash: ContentHash,
        linkTarget: String?, remoteVersion: String, time: Int64
    ) {
        self.path = path
        self.side = side
        self.kind = kind
        self.permissions = permissions
        self.size = size
        self.hash = hash
        self.linkTarget = linkTarget
        self.remoteVersion = remoteVersion
        self.time = time
    }

    /// The version of `entry` (nil: a deletion) at `path`.
    public init(
        path: RelativePath, side: Side, entry: SnapshotEntry?, remoteVersion: String, time: Int64
    ) {
        let kind: Kind =
            switch entry?.kind {
            case .regular: .file
            case .directory: .directory
            case .symbolicLink: .link
            default: .deleted
            }
        self.init(
            path: path, side: side, kind: kind, permissions: (entry?.permissions ?? 0) & 0o7777,
            size: kind == .file || kind == .link ? entry?.size ?? 0 : 0, hash: entry?.hash ?? ContentHash(high: 0, low: 0),
            linkTarget: kind == .link ? entry?.linkTarget : nil, remoteVersion: remoteVersion, time: time)
    }

    /// The same kept version, whatever its time.
    func sameVersion(as other: ConflictVersion) -> Bool {
        PathOrder.sameBytes(path.string, other.path.string) && side == other.side && kind == other.kind
            && permissions == other.permissions && size == other.size && hash == other.hash
            && linkTarget.map { target in other.linkTarget.map { PathOrder.sameBytes(target, $0) } ?? false }
                ?? (other.linkTarget == nil)
    }

    /// Path order (by bytes, depth first), then side, then hash: the record's order.
    static func ordered(_ a: ConflictVersion, _ b: ConflictVersion) -> Bool {
        if !PathOrder.sameBytes(a.path.string, b.path.string) { return PathOrder.pathLess(a.path.string, b.path.string) }
        if a.side != b.side { return a.side.order < b.side.order }
        if a.hash != b.hash { return a.hash.description < b.hash.description }
        if a.kind != b.kind { return a.kind.rawValue < b.kind.rawValue }
        return a.time < b.time
    }

    /// `SIDE KIND PERMS SIZE HASH VERSION TIME PATHHEX [TARGETHEX]`: the path and target as
    /// hexadecimal UTF-8, so that any name (a newline, a space) is one field.
    var line: String {
        var text = "\(side.rawValue) \(kind.rawValue) \(String(permissions, radix: 8)) \(size) \(hash) \(remoteVersion) \(time) "
        text += Self.hex(path.string)
        if let linkTarget { text += " " + Self.hex(linkTarget) }
        return text
    }

    init?(line: [UInt8]) {
        let fields = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard fields.count == 8 || fields.count == 9, let side = Side(rawValue: fields[0]), let kind = Kind(rawValue: fields[1])
        else { return nil }
        guard (1...4).contains(fields[2].utf8.count), fields[2].utf8.allSatisfy({ (0x30...0x37).contains($0) }),
            let permissions = UInt32(fields[2], radix: 8), PathOrder.sameBytes(String(permissions, radix: 8), fields[2])
        else { return nil }
        guard let size = Self.number(fields[3]), let time = Self.number(fields[6]) else { return nil }
        guard let hash = ContentHash(hex: fields[4]), PathOrder.sameBytes(hash.description, fields[4]) else { return nil }
        let version = fields[5]
        guard version.utf8.count == 64, version.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        guard let pathText = Self.unhex(fields[7]), let path = RelativePath(validating: pathText), !path.isRoot,
            !PathOrder.sameBytes(String(path.components.first ?? ""), PackageLayout.metadataDirectoryName)
        else { return nil }
        var target: String?
        if fields.count == 9 {
            guard kind == .link, let text = Self.unhex(fields[8]), !text.isEmpty, text.utf8.count <= 4096 else { return nil }
            target = text
        }
        switch kind {
        case .link: guard target != nil, size == Int64(target!.utf8.count) else { return nil }
        case .deleted: guard permissions == 0, size == 0, hash == ContentHash(high: 0, low: 0) else { return nil }
        case .directory: guard size == 0 else { return nil }
        case .file: break
        }
        self.init(
            path: path, side: side, kind: kind, permissions: permissions, size: size, hash: hash, linkTarget: target,
            remoteVersion: version, time: time)
    }

    /// A non-negative `Int64` in decimal without leading zero ("0" itself allowed).
    private static func number(_ text: String) -> Int64? {
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            text.utf8.count == 1 || text.utf8.first != 0x30
        else { return nil }
        return Int64(text)
    }

    /// Whether `path` is `ancestor` or lies beneath it, by bytes (every path lies beneath the root).
    package static func isSameOrBeneath(_ path: RelativePath, _ ancestor: RelativePath) -> Bool {
        if ancestor.isRoot || PathOrder.sameBytes(path.string, ancestor.string) { return true }
        return PathOrder.hasBytePrefix(path.string, ancestor.string + "/")
    }

    package static func hex(_ text: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 2)
        for byte in text.utf8 {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hexadecimal to the UTF-8 text it spells; nil when it is not that, or not UTF-8.
    static func unhex(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count % 2 == 0, bytes.count <= 2 * 4096 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case 0x30...0x39: digit - 0x30
            case 0x61...0x66: digit - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 2)
        var index = 0
        while index < bytes.count {
            guard let high = value(bytes[index]), let low = value(bytes[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return String(validating: out, as: UTF8.self)
    }
}

extension ConflictVersion.Side {
    /// The record's order of sides: local, other, base.
    var order: Int {
        switch self {
        case .local: return 0
        case .other: return 1
        case .base: return 2
        }
    }
}
