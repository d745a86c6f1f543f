import PackageCore
import PackageTestSupport
import Testing

/// A scan finds each file's record by walking the directory's recorded children beside its
/// sorted listing (`TreeScanner.recordedContent`): names that sort around a directory's
/// subtree, and twins that differ only in normalisation, each find their own record.
@Suite("Stat cache lookups by position")
struct RecordedLookupTests {
    @Test func everyFileFindsItsOwnRecord() throws {
        let directory = try TemporaryDirectory("recorded-lookup")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/a/sub")
        let files = ["a/x", "a/sub/y", "a-b", "a.c", "b", "caf\u{E9}", "cafe\u{301}", "z/only"]
        try Files.makeDirectory(source + "/z")
        let past: Int64 = 1_700_000_000_000_000_000
        for (number, path) in files.enumerated() {
            try Files.write(source + "/" + path, "file \(number)")
            try FileSystem.setModificationTime(source + "/" + path, past)
        }
        let package = directory.url("doc.pkg")
        let options = SaveOptions(strategy: .journaled, durability: .none)
        let first = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(first.filesHashed == files.count)
        let again = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(again.unchanged && again.filesHashed == 0, "every file's stamp was found")
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        let scan = try PackageScan.scan(source, useManifest: false).snapshot
        #expect(manifest.snapshot.rootHash == scan.rootHash)
        #expect(manifest.snapshot.entries.map(\.path) == scan.entries.map(\.path))
    }
}
