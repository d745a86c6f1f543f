// The code of the article "Writing a save source" (PackageCore.docc), compiled and run.
import Foundation
import PackageCore

/// Notes held in memory saved as a package: `notes/NAME` per note, plus `log.txt`, whose
/// bytes are produced piece by piece.
struct NotesSource: SaveSource {
    var notes: [String: String]  // file name → text
    var logLines: Int

    func validate(for package: PackageLocation) throws {
        for name in notes.keys where name.isEmpty || name.contains("/") || name == "." || name == ".." {
            throw SaveRefusal(path: package.path, reason: .refusedBySource("'\(name)' cannot be the file name of a note"))
        }
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        let now = Int64(Date().timeIntervalSince1970 * 1_000_000_000)
        var entries = [SnapshotEntry(path: "notes", kind: .directory, permissions: 0o755, size: 0, hash: .empty)]
        var origins: [String: ContentOrigin] = [:]
        for (name, text) in notes {
            let bytes = Array(text.utf8)
            let path = "notes/" + name
            entries.append(
                SnapshotEntry(
                    path: path, kind: .regular, permissions: 0o644, size: Int64(bytes.count),
                    hash: ContentHash.of(bytes), modificationTime: now))
            origins[path] = .bytes(bytes)
        }
        let log = RepeatedLine(line: "a line of the log\n", count: logLines)
        entries.append(
            SnapshotEntry(
                path: "log.txt", kind: .regular, permissions: 0o644, size: log.size, hash: log.hash(),
                modificationTime: now))
        origins["log.txt"] = .stream(log)
        // Sorted into path order, with each directory's Merkle hash and the root hash filled in.
        let snapshot = TreeSnapshot.assemble(entries)
        return SourceTree(snapshot: snapshot, contents: snapshot.entries.map { origins[$0.path] })
    }
}

/// A file's bytes produced in pieces, never held whole: the same line, `count` times.
struct RepeatedLine: ContentStream {
    var line: String
    var count: Int

    var size: Int64 { Int64(line.utf8.count * count) }

    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let bytes = Array(line.utf8)
        for _ in 0..<count { try bytes.withUnsafeBytes(body) }
    }

    /// The content hash of all the pieces, computed as they stream.
    func hash() -> ContentHash {
        let hasher = ContentHasher()
        try? forEachPiece { hasher.update($0) }
        return hasher.digest()
    }
}

/// The source saved twice: the second save writes only the note that changed.
func guideCustomSource(package: String) throws -> [SaveStatistics] {
    var source = NotesSource(notes: ["monday.txt": "call the bank", "tuesday.txt": "dentist"], logLines: 1000)
    let first = try PackageSaver.save(source, to: package).statistics
    source.notes["tuesday.txt"] = "dentist at 10"
    let second = try PackageSaver.save(source, to: package).statistics
    print("custom source: \(first.filesWritten) files, then \(second.filesWritten)")
    return [first, second]
}
