import Glibc
import PackageCore

/// Compares a target (a package or a copy) with its source byte for byte: the same names,
/// kinds and executable bits, the same bytes in every regular file, the same link targets.
/// A package's `.pkgtool` directory at its root is not content and is left out.
///
/// `pkgtool diff SRC PKG` trusts the package's manifest where its stat cache vouches for a
/// file; a chunk patch written into the wrong place would keep its stat data right and its
/// bytes wrong. This comparison trusts nothing: it reads both trees whole.
enum TreeComparison {
    /// The first difference found ("media/film.mov: bytes differ at offset 123"), or nil
    /// when the trees are equal.
    ///
    /// - Complexity: one `lstat` and one listing per entry of both trees; reads every
    ///   regular file of both in 1 MiB pieces.
    static func firstDifference(source: String, target: String) throws -> String? {
        let left = ChunkBuffer()
        let right = ChunkBuffer()
        return try compareDirectory("", source: source, target: target, left: left, right: right)
    }

    private static func compareDirectory(
        _ relative: String, source: String, target: String, left: ChunkBuffer, right: ChunkBuffer
    ) throws -> String? {
        func join(_ root: String, _ name: String) -> String {
            relative.isEmpty ? root + "/" + name : root + "/" + relative + "/" + name
        }
        let sourceNames = try DirectoryListing.names(in: try FileDescriptor.openDirectory(relative.isEmpty ? source : source + "/" + relative)).sorted()
        var targetNames = try DirectoryListing.names(in: try FileDescriptor.openDirectory(relative.isEmpty ? target : target + "/" + relative)).sorted()
        if relative.isEmpty { targetNames.removeAll { $0 == PackageLayout.metadataDirectoryName } }
        guard sourceNames == targetNames else {
            let missing = Set(sourceNames).subtracting(targetNames).sorted()
            let extra = Set(targetNames).subtracting(sourceNames).sorted()
            return "\(relative.isEmpty ? "." : relative): "
                + (missing.isEmpty ? "" : "missing \(missing.prefix(3).joined(separator: ", ")) ")
                + (extra.isEmpty ? "" : "extra \(extra.prefix(3).joined(separator: ", "))")
        }
        for name in sourceNames {
            let path = relative.isEmpty ? name : relative + "/" + name
            let a = try FileSystem.status(join(source, name))
            let b = try FileSystem.status(join(target, name))
            guard a.kind == b.kind else { return "\(path): \(a.kind) in the source, \(b.kind) in the target" }
            switch a.kind {
            case .directory:
                if let difference = try compareDirectory(path, source: source, target: target, left: left, right: right) {
                    return difference
                }
            case .symbolicLink:
                guard try FileSystem.readSymbolicLink(join(source, name)) == FileSystem.readSymbolicLink(join(target, name)) else {
                    return "\(path): the links point elsewhere"
                }
            case .regular:
                guard a.isExecutable == b.isExecutable else { return "\(path): executable bits differ" }
                guard a.size == b.size else { return "\(path): \(a.size) bytes in the source, \(b.size) in the target" }
                if let offset = try firstDifferingOffset(join(source, name), join(target, name), left: left, right: right) {
                    return "\(path): bytes differ at offset \(offset)"
                }
            default:
                continue
            }
        }
        return nil
    }

    /// The offset of the first differing byte of two files, or nil when they are equal.
    static func firstDifferingOffset(_ a: String, _ b: String, left: ChunkBuffer, right: ChunkBuffer) throws -> Int64? {
        let first = try FileDescriptor.open(a)
        let second = try FileDescriptor.open(b)
        var offset: Int64 = 0
        while true {
            let countA = try first.readFully(into: left.bytes, at: offset)
            let countB = try second.readFully(into: right.bytes, at: offset)
            let count = min(countA, countB)
            let pieceA = UnsafeRawBufferPointer(rebasing: left.bytes[..<count])
            let pieceB = UnsafeRawBufferPointer(rebasing: right.bytes[..<count])
            if count > 0, memcmp(pieceA.baseAddress!, pieceB.baseAddress!, count) != 0,
                let index = pieceA.indices.first(where: { pieceA[$0] != pieceB[$0] })
            {
                return offset + Int64(index)
            }
            if countA != countB { return offset + Int64(count) }
            if count == 0 { return nil }
            offset += Int64(count)
        }
    }
}
