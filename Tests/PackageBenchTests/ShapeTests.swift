import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageBench

/// The generators are deterministic and their scenarios change exactly what they say.
@Suite struct ShapeTests {
    static let small = PackageShape(kind: .document, bytes: 3 << 20, smallFiles: 250, largeFiles: 5, seed: 42)

    static func snapshot(_ path: String) throws -> TreeSnapshot {
        try TreeScanner(workers: 2).scan(path).snapshot
    }

    @Test func sameSeedSameTree() throws {
        let directory = try TemporaryDirectory("shapes")
        let a = try ShapeGenerator.generate(Self.small, at: directory.url("a"))
        let b = try ShapeGenerator.generate(Self.small, at: directory.url("b"))
        var other = Self.small
        other.seed = 43
        _ = try ShapeGenerator.generate(other, at: directory.url("c"))
        let hashA = try Self.snapshot(directory.url("a")).rootHash
        #expect(hashA == (try Self.snapshot(directory.url("b")).rootHash))
        #expect(hashA != (try Self.snapshot(directory.url("c")).rootHash))
        #expect(a.smallFiles == b.smallFiles)
        #expect(a.largeFiles == b.largeFiles)
        // The sizes asked for, exactly, and the entries counted.
        #expect(a.totalBytes == Self.small.bytes)
        let entries = try Self.snapshot(directory.url("a")).entries
        #expect(entries.filter { !$0.path.isEmpty }.count == a.entryCount)
        let files = entries.filter { $0.kind == .regular }
        #expect(files.count == 1 + 250 + 5)
        #expect(files.map(\.size).reduce(0, +) == a.totalBytes)
        // A fixed past date on every file.
        #expect(files.allSatisfy { $0.modificationTime == GeneratedPackage.baseTime })
    }

    @Test func shapesOfEachKind() throws {
        let directory = try TemporaryDirectory("kinds")
        let smallFiles = try ShapeGenerator.generate(
            PackageShape.make(.smallFiles, entries: 1234, seed: 1), at: directory.url("s"))
        #expect(smallFiles.smallFiles.count == 1234)
        #expect(smallFiles.largeFiles.isEmpty)
        let sizes = try Self.snapshot(directory.url("s")).entries.filter { $0.kind == .regular && $0.path.hasPrefix("files/") }
        #expect(sizes.allSatisfy { $0.size <= 4096 })
        let huge = PackageShape.make(.huge, bytes: 6 << 20, entries: 10, seed: 1)
        let generated = try ShapeGenerator.generate(huge, at: directory.url("h"))
        #expect(generated.largeFiles.map(\.size).sorted() == generated.largeFiles.map(\.size).sorted())
        #expect(generated.largeFiles.count == 3)
        #expect(generated.totalBytes == 6 << 20)
        // 3:4:5 shares of what the pages leave.
        let large = generated.largeFiles.map(\.size)
        #expect(large[0] < large[1] && large[1] < large[2])
    }

    @Test func defaultDocumentMatchesTheBaselines() {
        let shape = PackageShape.make(.document, seed: 1)
        #expect(shape.bytes == 1 << 30)
        #expect(shape.smallFiles == 20_000)
        #expect(shape.largeFiles == 40)
        #expect(PackageShape.make(.document, bytes: 4 << 30, seed: 1).smallFiles == 20_000)
        #expect(PackageShape.make(.smallFiles, seed: 1).smallFiles == 100_000)
        #expect(shape.slug == "document-1GiB")
    }

    /// Each scenario, applied twice: the diff between the states is what it promises.
    @Test(arguments: Scenario.allCases)
    func scenarioChangesWhatItSays(_ scenario: Scenario) throws {
        let directory = try TemporaryDirectory("scenario")
        let generated = try ShapeGenerator.generate(Self.small, at: directory.url("src"))
        let tree = SourceTree(generated)
        for _ in 0..<2 {
            let before = try Self.snapshot(generated.root)
            let edit = try tree.apply(scenario)
            let after = try Self.snapshot(generated.root)
            let changes = TreeDiff.changes(from: before, to: after).filter { $0.newEntry?.kind != .directory && $0.oldEntry?.kind != .directory }
            let statuses = changes.map(\.status.rawValue).sorted()
            switch scenario {
            case .noChange:
                #expect(changes.isEmpty)
                #expect(after.rootHash == before.rootHash)
            case .mediaPatch:
                // Issue 4's scenario: 1 MiB inside a media file, and one JSON page.
                #expect(statuses == ["M", "M"])
                #expect(edit.filesChanged == 2)
                #expect(edit.bytesChanged == changes.reduce(0) { $0 + $1.newEntry!.size })
            case .smallEdit, .mediaReplaced:
                #expect(statuses == ["M"])
                #expect(edit.filesChanged == 1)
                #expect(edit.bytesChanged == changes[0].newEntry!.size)
            case .largeFile:
                // 1 MiB inside the largest file (the bytes themselves: `largeFileEditsOneMiB`).
                #expect(statuses == ["M"])
                #expect(changes[0].path == generated.largeFiles.max { $0.size < $1.size }!.path)
                #expect(edit.filesChanged == 1)
                #expect(edit.bytesChanged == min(1 << 20, changes[0].newEntry!.size))
            case .tenPercent:
                #expect(statuses.allSatisfy { $0 == "M" })
                #expect(changes.count == edit.filesChanged)
                #expect(abs(changes.count - 26) <= 2)
            case .everything:
                #expect(changes.count == 250 + 5)
                #expect(edit.filesChanged == 255)
            case .rename:
                #expect(statuses == ["R"])
                #expect(edit.renamed == 1)
            case .addRemove:
                #expect(statuses == ["A", "D"])
                #expect(edit.filesChanged == 1 && edit.removed == 1)
            }
            // Sizes and the file count never change; every edit moves the clock on.
            #expect(after.entries.filter { $0.kind == .regular }.count == tree.fileCount)
            for change in changes where change.status == .modified {
                #expect(change.newEntry!.size == change.oldEntry!.size)
                #expect(change.newEntry!.modificationTime > change.oldEntry!.modificationTime)
            }
        }
    }

    /// The media shape: a document of `documentBytes` and one large file, its sizes exact.
    @Test func mediaShape() throws {
        let shape = PackageShape.make(.media, bytes: 6 << 20, entries: 40, seed: 3, documentBytes: 1 << 20)
        #expect(shape.bytes == 7 << 20 && shape.mediaFileBytes == 6 << 20)
        #expect(shape.slug == "media-6MiB")
        #expect(PackageShape.make(.media, seed: 1).slug == "media-1GiB")
        #expect(PackageShape.make(.media, seed: 1).bytes == (1 << 30) + (64 << 20))
        let directory = try TemporaryDirectory("media")
        let generated = try ShapeGenerator.generate(shape, at: directory.url("m"))
        #expect(generated.totalBytes == shape.bytes)
        #expect(generated.smallFiles.count == 40)
        #expect(generated.largeFiles.count == 9)
        #expect(generated.largeFiles.last == GeneratedPackage.LargeFile(path: "media/film.mov", size: 6 << 20))
        #expect(generated.largeFiles.dropLast().allSatisfy { $0.path.hasPrefix("media/clip-") && $0.size < 1 << 20 })
        let files = try Self.snapshot(directory.url("m")).entries.filter { $0.kind == .regular }
        #expect(files.map(\.size).reduce(0, +) == shape.bytes)
    }

    /// `large-file` writes 1 MiB of new bytes at an unaligned offset of the largest file, a
    /// different offset each time, and nothing else.
    @Test func largeFileEditsOneMiB() throws {
        let shape = PackageShape.make(.media, bytes: 2 << 20, entries: 10, seed: 9, documentBytes: 512 << 10)
        let directory = try TemporaryDirectory("large-file")
        let generated = try ShapeGenerator.generate(shape, at: directory.url("m"))
        let tree = SourceTree(generated)
        let film = directory.url("m") + "/media/film.mov"
        var offsets: Set<Int64> = []
        for _ in 0..<3 {
            let before = try Data(contentsOf: URL(fileURLWithPath: film))
            let edit = try tree.apply(.largeFile)
            let after = try Data(contentsOf: URL(fileURLWithPath: film))
            #expect(after.count == before.count)
            let differing = before.indices.filter { before[$0] != after[$0] }
            let first = try #require(differing.first)
            let last = try #require(differing.last)
            // New random bytes: nearly every byte of the span differs; none outside it.
            #expect(last - first < 1 << 20 && last - first > (1 << 20) - 64)
            #expect(edit.bytesChanged == 1 << 20)
            // The offset the edit names: the span starts there (a random byte may equal the old one).
            let named = try #require(edit.description.components(separatedBy: "at offset ").last?.split(separator: " ").first)
            let offset = try #require(Int(named))
            #expect(offset <= first && first < offset + 64)
            #expect(last < offset + (1 << 20))
            offsets.insert(Int64(offset))
        }
        #expect(offsets.count == 3)
        #expect(offsets.contains { $0 % 4096 != 0 })
    }

    @Test func mediaScenariosNeedMedia() {
        let files = PackageShape.make(.smallFiles, entries: 10, seed: 1)
        #expect(!Scenario.mediaPatch.applies(to: files))
        #expect(!Scenario.mediaReplaced.applies(to: files))
        #expect(Scenario.rename.applies(to: files))
        #expect(Scenario.mediaPatch.applies(to: Self.small))
    }
}
