import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// A base package every change case starts from.
private func makeBase(_ root: String) throws {
    try Files.makeDirectory(root + "/pages")
    try Files.makeDirectory(root + "/media/empty")
    try Files.makeDirectory(root + "/deep/a/b/c")
    try Files.write(root + "/metadata.json", #"{"title":"base"}"#)
    try Files.write(root + "/pages/1.txt", "page one")
    try Files.write(root + "/pages/2.txt", "page two")
    try Files.write(root + "/run.sh", "#!/bin/sh\n")
    try Files.write(root + "/deep/a/b/c/leaf.txt", "leaf")
    try Files.write(root + "/thing", "a file that becomes a directory")
    try Files.symlink(root + "/latest", to: "pages/1.txt")
}

struct DiffCase: CustomTestStringConvertible, Sendable {
    var name: String
    var change: @Sendable (String) throws -> Void
    var expected: [String]
    var testDescription: String { name }
}

@Suite("pkgtool diff")
struct DiffCommandTests {
    static let cases: [DiffCase] = [
        DiffCase(name: "identical", change: { _ in }, expected: []),
        DiffCase(name: "one file modified", change: { try Files.write($0 + "/pages/1.txt", "page ONE") }, expected: ["M\tpages/1.txt"]),
        DiffCase(name: "one file added", change: { try Files.write($0 + "/pages/3.txt", "page three") }, expected: ["A\tpages/3.txt"]),
        DiffCase(name: "one file deleted", change: { try FileSystem.remove($0 + "/pages/2.txt") }, expected: ["D\tpages/2.txt"]),
        DiffCase(
            name: "renamed (unique content)",
            change: { try FileSystem.rename($0 + "/pages/2.txt", to: $0 + "/pages/two.txt") },
            expected: ["R\tpages/2.txt\tpages/two.txt"]),
        DiffCase(
            name: "directory renamed as a whole",
            change: { try FileSystem.rename($0 + "/deep/a", to: $0 + "/deep/z") },
            expected: ["R\tdeep/a\tdeep/z"]),
        DiffCase(
            name: "file replaced by a directory",
            change: {
                try FileSystem.remove($0 + "/thing")
                try Files.makeDirectory($0 + "/thing")
                try Files.write($0 + "/thing/inside.txt", "inside")
            },
            expected: ["T\tthing", "A\tthing/inside.txt"]),
        DiffCase(
            name: "directory replaced by a file",
            change: {
                try FileSystem.removeTree($0 + "/media")
                try Files.write($0 + "/media", "now a file")
            },
            expected: ["T\tmedia", "D\tmedia/empty"]),
        DiffCase(
            name: "symlink retargeted",
            change: {
                try FileSystem.remove($0 + "/latest")
                try Files.symlink($0 + "/latest", to: "pages/2.txt")
            },
            expected: ["M\tlatest"]),
        DiffCase(name: "mode change", change: { try FileSystem.setPermissions($0 + "/run.sh", 0o755) }, expected: ["M\trun.sh"]),
        DiffCase(
            name: "nested change", change: { try Files.write($0 + "/deep/a/b/c/leaf.txt", "LEAF") },
            expected: ["M\tdeep/a/b/c/leaf.txt"]),
        DiffCase(
            name: "Unicode names, NFC and NFD kept apart",
            change: {
                try Files.write($0 + "/pages/caf\u{E9}.txt", "precomposed")
                try Files.write($0 + "/pages/cafe\u{301}.txt", "decomposed")
            },
            expected: ["A\tpages/cafe\u{301}.txt", "A\tpages/caf\u{E9}.txt"]),
        DiffCase(
            name: "empty directories added and removed",
            change: {
                try FileSystem.removeDirectory($0 + "/media/empty")
                try Files.makeDirectory($0 + "/pages/drafts")
            },
            expected: ["D\tmedia/empty", "A\tpages/drafts"]),
        DiffCase(
            name: "moved file among other changes",
            change: {
                try FileSystem.rename($0 + "/deep/a/b/c/leaf.txt", to: $0 + "/pages/leaf.txt")
                try Files.write($0 + "/metadata.json", #"{"title":"moved"}"#)
            },
            expected: ["M\tmetadata.json", "R\tdeep/a/b/c/leaf.txt\tpages/leaf.txt"]),
    ]

    @Test("exact name-status output", arguments: cases)
    func nameStatus(_ diffCase: DiffCase) throws {
        let directory = try TemporaryDirectory("diff")
        try makeBase(directory.url("old"))
        try makeBase(directory.url("new"))
        try diffCase.change(directory.url("new"))
        let result = pkgtool("diff", directory.url("old"), directory.url("new"))
        #expect(result.errors == [])
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        #expect(lines == diffCase.expected)
        #expect(result.status == (diffCase.expected.isEmpty ? .success : .failure))

        // The same change, seen against the package's own manifest.
        let manifest = pkgtool("manifest", directory.url("old"))
        #expect(manifest.status == .success)
        try diffCase.change(directory.url("old"))
        let sinceManifest = pkgtool("diff", directory.url("old"))
        let sinceLines = sinceManifest.output.split(separator: "\n").map(String.init)
        #expect(sinceLines == diffCase.expected)
    }

    @Test("the same changes between two FileWrapper trees", arguments: cases)
    func fileWrappers(_ diffCase: DiffCase) throws {
        let directory = try TemporaryDirectory("diff-wrappers")
        try makeBase(directory.url("old"))
        try makeBase(directory.url("new"))
        try diffCase.change(directory.url("new"))
        let old = try FileWrapper(url: URL(fileURLWithPath: directory.url("old")))
        let new = try FileWrapper(url: URL(fileURLWithPath: directory.url("new")))
        #expect(try TreeDiff.changes(from: old, to: new).map(\.nameStatusLine) == diffCase.expected)
    }

    @Test("an edited copy of a tree in memory diffs against the original without reading unchanged files")
    func inMemoryEdit() throws {
        let directory = try TemporaryDirectory("diff-memory")
        try makeBase(directory.url("doc"))
        let original = try FileWrapper(url: URL(fileURLWithPath: directory.url("doc")))
        _ = try original.contentHash
        let edited = try FileWrapper(url: URL(fileURLWithPath: directory.url("doc")))
        let pages = try #require(edited.fileWrapper(forKey: "pages"))
        pages.removeFileWrapper(try #require(pages.fileWrapper(forKey: "1.txt")))
        pages.addRegularFile(withContents: Data("page one, edited".utf8), preferredFilename: "1.txt")
        let counter = StepCounter()
        let changes = try IOFaultInjection.withInjector(counter) { try TreeDiff.changes(from: original, to: edited) }
        #expect(changes.map(\.nameStatusLine) == ["M\tpages/1.txt"])
        // The edited tree hashes what it must (files not hashed before were read when the
        // original was); the original is not reread.
        #expect(counter.count(.open) <= 12)
    }

    @Test("JSON and summary forms")
    func jsonAndStat() throws {
        let directory = try TemporaryDirectory("diff-json")
        try makeBase(directory.url("old"))
        try makeBase(directory.url("new"))
        try Files.write(directory.url("new/pages/1.txt"), "changed")
        try FileSystem.remove(directory.url("new/pages/2.txt"))
        let json = pkgtool("diff", "--json", directory.url("old"), directory.url("new"))
        #expect(json.status == .failure)
        #expect(json.output.contains(#""status": "M""#))
        #expect(json.output.contains(#""path": "pages/1.txt""#))
        let stat = pkgtool("diff", "--stat", directory.url("old"), directory.url("new"))
        #expect(stat.output == "2 changes: 0 added, 1 deleted, 1 modified, 0 renamed, 0 type changed\n")
        let both = pkgtool("diff", "--stat", "--json", directory.url("old"), directory.url("new"))
        #expect(both.status == .trouble)
    }

    @Test("bad input: a missing side is trouble, not a difference")
    func missingSide() throws {
        let directory = try TemporaryDirectory("diff-missing")
        try makeBase(directory.url("old"))
        let result = pkgtool("diff", directory.url("old"), directory.url("nope"))
        #expect(result.status == .trouble)
        #expect(result.errors.count == 1)
        #expect(result.errors[0].hasPrefix("cannot stat '\(directory.url("nope"))'"))
        let noManifest = pkgtool("diff", directory.url("old"))
        #expect(noManifest.status == .trouble)
        #expect(noManifest.errors[0].contains("has no manifest"))
    }
}
