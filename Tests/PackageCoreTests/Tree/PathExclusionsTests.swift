import PackageCore
import PackageTestSupport
import Testing

/// `--exclude`: globs over names and paths, matched as bytes, applied by the scanner, so
/// that a save and a pack leave the same entries out.
@Suite("Path exclusions")
struct PathExclusionsTests {
    @Test func namesPathsAnchorsAndDirectories() {
        let rules = PathExclusions(["*.tmp", "media/cache/*", "/build", "logs/", ""])
        #expect(rules.excludes(path: "a/b/x.tmp", name: "x.tmp", isDirectory: false))
        #expect(rules.excludes(path: "media/cache/thumb.png", name: "thumb.png", isDirectory: false))
        #expect(!rules.excludes(path: "media/cache/deeper/thumb.png", name: "thumb.png", isDirectory: false), "* never crosses /")
        #expect(!rules.excludes(path: "other/media/cache/thumb.png", name: "thumb.png", isDirectory: false))
        #expect(rules.excludes(path: "build", name: "build", isDirectory: true))
        #expect(!rules.excludes(path: "src/build", name: "build", isDirectory: true), "a leading / anchors")
        #expect(rules.excludes(path: "a/logs", name: "logs", isDirectory: true))
        #expect(!rules.excludes(path: "a/logs", name: "logs", isDirectory: false), "a trailing / means directories only")
        #expect(!rules.excludes(path: "pages/1.json", name: "1.json", isDirectory: false))
        #expect(!PathExclusions.none.excludes(path: "x", name: "x", isDirectory: false))
    }

    @Test func theLitterAndNothingElse() {
        for name in [".DS_Store", "._page.json", "Thumbs.db", "desktop.ini", ".page.json.swp", "notes.txt~", ".#notes.txt"] {
            #expect(PathExclusions.litter.excludes(path: "pages/" + name, name: name, isDirectory: false), "\(name)")
        }
        for name in ["metadata.json", "DS_Store", "page.swp.json", "_page", "~notes"] {
            #expect(!PathExclusions.litter.excludes(path: name, name: name, isDirectory: false), "\(name)")
        }
    }

    /// Names are checked against a pattern's literal prefix and suffix before fnmatch: the
    /// check never drops a match (brackets, escapes, `?`, a prefix and suffix that would overlap).
    @Test func theLiteralPrecheckKeepsEveryMatch() {
        let rules = PathExclusions(["*.[jt]s", "draft?.md", "\\*star", "ab*ba", "[.]hidden", "a]b"])
        for name in ["x.js", "x.ts", "draft1.md", "*star", "abba", "ab-ba", ".hidden", "a]b"] {
            #expect(rules.excludes(path: "d/" + name, name: name, isDirectory: false), "\(name)")
        }
        for name in ["x.cs", "x.jss", "draft12.md", "xstar", "aba", "hidden", "ab"] {
            #expect(!rules.excludes(path: "d/" + name, name: name, isDirectory: false), "\(name)")
        }
    }

    /// A pattern written in one normalisation leaves the other's twin in: names are bytes.
    @Test func twinsAreDifferentNames() {
        let rules = PathExclusions(["caf\u{e9}.txt"])
        #expect(rules.excludes(path: "caf\u{e9}.txt", name: "caf\u{e9}.txt", isDirectory: false))
        #expect(!rules.excludes(path: "cafe\u{301}.txt", name: "cafe\u{301}.txt", isDirectory: false))
    }

    /// Saved and packed alike: the excluded entries (a directory with its contents) are not
    /// in the package, and a package that held one loses it at the next save.
    @Test func aSaveAndAPackLeaveTheSameEntriesOut() throws {
        let directory = try TemporaryDirectory("exclusions")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/cache/deep")
        try Files.makeDirectory(source + "/pages")
        try Files.write(source + "/metadata.json", "{}")
        try Files.write(source + "/pages/1.json", "1")
        try Files.write(source + "/pages/.DS_Store", "x")
        try Files.write(source + "/cache/deep/blob", "b")
        let package = directory.url("doc.pkg")
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: SaveOptions(durability: .none))
        #expect(try FileSystem.statusIfExists(package + "/pages/.DS_Store") != nil)
        let rules = PathExclusions.litter.adding(PathExclusions(["cache/"]))
        for strategy in SaveStrategy.allCases {
            _ = try PackageSaver.save(
                DirectorySource(source, excluding: rules), to: package, options: SaveOptions(strategy: strategy, durability: .none))
            #expect(try FileSystem.statusIfExists(package + "/pages/.DS_Store") == nil, "\(strategy)")
            #expect(try FileSystem.statusIfExists(package + "/cache") == nil, "\(strategy)")
            #expect(try FileSystem.statusIfExists(package + "/pages/1.json") != nil, "\(strategy)")
        }
        var scanner = TreeScanner(workers: 2)
        scanner.exclusions = rules
        #expect(try scanner.scan(source).snapshot.entries.map(\.path) == ["metadata.json", "pages", "pages/1.json"])
    }
}
