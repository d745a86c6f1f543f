// The code of the article "Writing a save source" (PackageCore.docc), compiled and run.
import Foundation
import PackageCore

/// Notes held in memory saved as a package: `notes/NAME` per note, plus `log.txt`, whose
/// bytes are produced piece by piece.
struct NotesSource: SaveSource {
    var notes: [String: String]  // file name → text
    var logLines: Int

    func validate(for package: PackageLocation) throws {
        for name in notes.keys where !RelativePath.isValidName(name) {
            throw SaveRefusal(path: package.path, reason: .refusedBySource("'\(name)' cannot be the file name of a note"))
        }
    }

    func wholeTree(in context: SaveSourceContext) throws -> SourceTree {
        // In any order: the engine checks the paths, sorts them, hashes what is not hashed
        // and computes the folders' hashes.
        var entries: [SourceEntry] = [.directory("notes")]
        for (name, text) in notes {
            let path = RelativePath("notes").appending(name)
            entries.append(.file(path, from: .bytes(Array(text.utf8))))
        }
        // No hash given: the engine reads the stream to hash it (and again to write it, when
        // the log changed).
        entries.append(.file("log.txt", from: .stream(RepeatedLine(line: "a line of the log\n", count: logLines))))
        return SourceTree(entries: entries)
    }
}

/// A file's bytes produced in pieces, never held whole: the same line, `count` times.
struct RepeatedLine: ContentStream {
    var line: String
    var count: Int

    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let bytes = Array(line.utf8)
        for _ in 0..<count { try bytes.withUnsafeBytes(body) }
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
