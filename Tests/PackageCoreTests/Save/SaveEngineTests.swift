import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

/// A small document package: metadata, pages, a multi-chunk media file, a link, an empty folder.
func makeDocument(_ root: String, pages: Int = 30, mediaSize: Int = 3 << 20, seed: UInt64 = 1) throws {
    try Files.makeDirectory(root + "/pages")
    try Files.makeDirectory(root + "/media")
    try Files.makeDirectory(root + "/attic/empty")
    try Files.write(root + "/metadata.json", #"{"title":"doc","pages":\#(pages)}"#)
    for index in 0..<pages { try Files.write(root + "/pages/\(index).txt", "page \(index) " + String(repeating: "x", count: index)) }
    try Files.writeRandom(root + "/media/clip.bin", size: mediaSize, seed: seed)
    try Files.write(root + "/tool.sh", "#!/bin/sh\necho hi\n", permissions: 0o755)
    try Files.symlink(root + "/cover", to: "pages/0.txt")
}

/// A change touching every kind of operation a save performs.
func changeDocument(_ root: String) throws {
    try Files.write(root + "/metadata.json", #"{"title":"doc, edited"}"#)
    try Files.write(root + "/pages/3.txt", "page three, rewritten")
    try FileSystem.remove(root + "/pages/4.txt")
    try Files.write(root + "/pages/new.txt", "a new page")
    try Files.makeDirectory(root + "/notes/deep")
    try Files.write(root + "/notes/deep/n.txt", "note")
    try FileSystem.removeTree(root + "/attic")
    try Files.write(root + "/attic", "attic is a file now")
    try FileSystem.remove(root + "/cover")
    try Files.symlink(root + "/cover", to: "pages/1.txt")
    try FileSystem.setPermissions(root + "/pages/5.txt", 0o600)
    try FileSystem.setPermissions(root + "/tool.sh", 0o644)
}

@Suite("The save engine")
struct SaveEngineTests {
    @Test("every strategy makes the package equal to the source, and it verifies", arguments: SaveStrategy.allCases)
    func strategiesConverge(_ strategy: SaveStrategy) throws {
        let directory = try TemporaryDirectory("save-\(strategy)")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        try makeDocument(source)
        let options = SaveOptions(strategy: strategy, durability: .none, workers: 2)
        let first = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(first.filesWritten == 33)
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        try changeDocument(source)
        let second = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        #expect(second.rootHash == (try Trees.contentHash(source)))
        // Permission bits beyond the executable bit follow the source too.
        #expect(try FileSystem.status(package + "/pages/5.txt").permissions == 0o600)
        // The manifest describes what is on disk.
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        #expect(manifest.snapshot.rootHash == (try Trees.contentHash(package)))
        let rescan = try PackageScan.scan(package)
        #expect(TreeDiff.changes(from: manifest.snapshot, to: rescan.snapshot).isEmpty)
        // Nothing but the package and its lock file beside it; no temporaries inside.
        #expect(try Trees.names(directory.path) == ["doc.pkg", "src"])
        if strategy == .journaled { #expect(try Trees.names(package + "/.pkgtool/tmp").isEmpty) }
        // With nothing to do, a save writes no file. Entries touched moments ago may be
        // reread once (racy timestamps, renamed files' new ctimes) and recorded afresh;
        // after that a save reads nothing either.
        let third = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        let regularFiles = try PackageScan.scan(source, useManifest: false).snapshot.entries.filter { $0.kind == .regular }.count
        #expect(third.filesWritten == (strategy == .full ? regularFiles : 0))
        if strategy != .full {
            try Trees.settleDirectories(source)
            try Trees.settleDirectories(package)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            let fourth = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            #expect(fourth.unchanged && fourth.filesWritten == 0 && fourth.metadataBytesWritten == 0)
            #expect(fourth.filesHashed == 0, "files are not reread when their stat data match")
        }
    }

    @Test("incremental strategies write only the changed files plus a small manifest record")
    func accounting() throws {
        let directory = try TemporaryDirectory("save-accounting")
        let source = directory.url("src")
        try Files.makeDirectory(source + "/pages")
        try Files.makeDirectory(source + "/media")
        for folder in 0..<20 {
            try Files.makeDirectory(source + "/pages/\(folder)")
            for index in 0..<100 {
                try Files.write(source + "/pages/\(folder)/\(index).json", #"{"page":\#(index),"folder":\#(folder)}"#)
            }
        }
        for index in 0..<4 { try Files.writeRandom(source + "/media/\(index).bin", size: (index + 2) << 20, seed: UInt64(index)) }
        for (round, strategy) in [SaveStrategy.journaled, .atomic].enumerated() {
            let package = directory.url("\(strategy).pkg")
            let options = SaveOptions(strategy: strategy, durability: .none, workers: 2)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            // Change 1 MiB inside one media file and one small JSON file.
            let media = source + "/media/2.bin"
            let file = try FileDescriptor.open(media, access: .readWrite)
            var generator = SeededBytes(seed: 99 + UInt64(round))
            try generator.bytes(1 << 20).withUnsafeBytes { try file.write($0, at: 1 << 20) }
            try Files.write(source + "/pages/7/7.json", #"{"page":7,"edited":\#(round)}"#)
            let statistics = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            let changedBytes = Int64(4 << 20) + Int64(#"{"page":7,"edited":\#(round)}"#.utf8.count)
            #expect(statistics.filesWritten == 2, "\(strategy)")
            #expect(statistics.bytesWritten == changedBytes, "\(strategy)")
            #expect(statistics.metadataBytesWritten < 64 << 10, "\(strategy): \(statistics.metadataBytesWritten)")
            #expect(statistics.bytesWritten + statistics.metadataBytesWritten <= changedBytes + (64 << 10))
            if strategy == .atomic { #expect(statistics.filesLinked == 2002) }
            #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        }
    }

    @Test("atomic where hard links are impossible (EXDEV): unchanged files are copied, and the statistics say so")
    func atomicWithoutLinks() throws {
        let directory = try TemporaryDirectory("save-no-links")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        try makeDocument(source)
        let options = SaveOptions(strategy: .atomic, durability: .none, workers: 2)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        try Files.write(source + "/pages/3.txt", "page three, rewritten")
        let statistics = try IOFaultInjection.withInjector(FailingStep(.link, pathFragment: "", fault: .error(.crossDevice))) {
            try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        }
        #expect(statistics.filesLinked == 0)
        #expect(statistics.filesWritten == 1)
        // Every other regular file (pages, metadata, media, tool.sh) was copied instead.
        #expect(statistics.filesCopiedForLinks == 32)
        #expect(statistics.notes.contains { $0.contains("hard links are impossible here (EXDEV)") })
        #expect(try Trees.contentHash(package) == Trees.contentHash(source))
        #expect(try Trees.names(directory.path) == ["doc.pkg", "src"])
    }

    @Test("a one-file save writes a manifest record whose size does not grow with the package")
    func deltaIndependentOfSize() throws {
        var metadataBytes: [Int64] = []
        for folders in [5, 50] {
            let directory = try TemporaryDirectory("save-scale")
            let source = directory.url("src")
            for folder in 0..<folders {
                try Files.makeDirectory(source + "/d\(folder)")
                for index in 0..<400 { try Files.write(source + "/d\(folder)/\(index)", "\(folder).\(index)") }
            }
            let package = directory.url("big.pkg")
            let options = SaveOptions(strategy: .journaled, durability: .none, workers: 2)
            _ = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            try Files.write(source + "/d3/42", "edited!")
            let statistics = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            #expect(statistics.entryCount == folders * 401)
            #expect(statistics.filesWritten == 1)
            metadataBytes.append(statistics.metadataBytesWritten)
            let manifest = try #require(try PackageManifest.load(packagePath: package))
            #expect(manifest.snapshot.rootHash == statistics.rootHash)
        }
        #expect(metadataBytes[0] == metadataBytes[1], "2,005 and 20,050 entries: \(metadataBytes)")
        #expect(metadataBytes[1] < 4 << 10)
    }

    @Test("a source file reread because its recorded stamp is racy is recorded afresh: the save after reads nothing")
    func racySourceStampsRefreshed() throws {
        let directory = try TemporaryDirectory("save-racy-stamps")
        let source = directory.url("src")
        let package = directory.url("doc.pkg")
        let past = SystemClock.realtimeNanoseconds - 10_000_000_000
        try Files.makeDirectory(source)
        for index in 0..<3 {
            try Files.write(source + "/\(index).txt", "page \(index)")
            try FileSystem.setModificationTime(source + "/\(index).txt", past)
        }
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 2)
        _ = try PackageSaver.save(DirectorySource(source), to: package, options: options)
        // The record now looks written before the files' mtimes: every stamp still matches,
        // but none vouches for its file (racy), so the next save rereads them all.
        try FileSystem.setModificationTime(package + "/.pkgtool/index", past - 10_000_000_000)
        try Trees.settleDirectories(source)
        let reread = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(reread.filesHashed == 3 && reread.filesWritten == 0 && reread.unchanged)
        #expect(reread.metadataBytesWritten > 0, "the reread files are recorded afresh")
        let settled = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
        #expect(settled.filesHashed == 0 && settled.metadataBytesWritten == 0)
    }

    @Test("a save from a copy of the source rereads every file and records every new stamp in a new base")
    func copiedSourceRecordsNewBase() throws {
        let directory = try TemporaryDirectory("save-copied-source")
        let package = directory.url("doc.pkg")
        let past = SystemClock.realtimeNanoseconds - 10_000_000_000
        // More files than a delta may carry (1,024 records): every stamp changes in the copy.
        let count = 1_100
        for copy in ["src", "copy"] {
            for index in 0..<count {
                let path = directory.url(copy) + "/d\(index % 10)/\(index).txt"
                try Files.makeDirectory(RelativePath.parent(of: path))
                try Files.write(path, "page \(index)")
                try FileSystem.setModificationTime(path, past)
            }
            try Trees.settleDirectories(directory.url(copy))
        }
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 2)
        _ = try PackageSaver.save(DirectorySource(directory.url("src")), to: package, options: options)
        let copied = try PackageSaver.save(DirectorySource(directory.url("copy")), to: package, options: options).statistics
        #expect(copied.filesHashed == count && copied.filesWritten == 0 && copied.unchanged)
        #expect(copied.manifestCompacted, "a new base, not a delta of every entry")
        let manifest = try #require(try PackageManifest.load(packagePath: package))
        #expect(manifest.lastSequence == 0 && manifest.snapshot.rootHash == copied.rootHash)
        for entry in manifest.entries where entry.kind == .regular {
            let status = try FileSystem.status(directory.url("copy") + "/" + entry.path)
            #expect(entry.source == SourceStamp(status))
        }
        try Trees.settleDirectories(package)
        let again = try PackageSaver.save(DirectorySource(directory.url("copy")), to: package, options: options).statistics
        #expect(again.filesHashed == 0 && again.metadataBytesWritten == 0)
    }

    @Test("progress counts files and 1 MiB chunks and ends at exactly 1.0")
    func progress() throws {
        let directory = try TemporaryDirectory("save-progress")
        let source = directory.url("src")
        try makeDocument(source, mediaSize: (5 << 20) + 7)
        let reports = LockedList<SaveProgress>()
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 2) { reports.append($0) }
        _ = try PackageSaver.save(DirectorySource(source), to: directory.url("p"), options: options).statistics
        let all = reports.items
        let last = try #require(all.last)
        #expect(last.fractionCompleted == 1.0)
        #expect(last.totalBytes == last.completedBytes)
        #expect(last.totalUnits == 33 + 6 + 1, "33 files, 6 MiB of chunks and the small files' bytes")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.completedUnits <= $1.completedUnits })
    }

    @Test("a save reports through a Subprogress: the parent reaches 1.0 with bytes and files counted")
    func subprogress() throws {
        let directory = try TemporaryDirectory("save-subprogress")
        let source = directory.url("src")
        try makeDocument(source, mediaSize: (3 << 20) + 5)
        let parent = ProgressManager(totalCount: 10)
        let statistics = try PackageSaver.save(
            DirectorySource(source), to: directory.url("p"), options: SaveOptions(durability: .none),
            progress: parent.subprogress(assigningCount: 10)).statistics
        #expect(statistics.filesWritten == 33)
        #expect(parent.fractionCompleted == 1.0)
        #expect(parent.isFinished)
        // A save with nothing to do still completes its share.
        let second = ProgressManager(totalCount: 2)
        _ = try PackageSaver.save(
            DirectorySource(source), to: directory.url("p"), options: SaveOptions(durability: .none),
            progress: second.subprogress(assigningCount: 2)).statistics
        #expect(second.fractionCompleted == 1.0)
    }

    @Test("bad input: a file as source, a file as package, overlapping paths")
    func refusals() throws {
        let directory = try TemporaryDirectory("save-bad")
        try Files.write(directory.url("file"), "x")
        try Files.makeDirectory(directory.url("src/inner"))
        #expect(throws: SaveRefusal.self) { try PackageSaver.save(DirectorySource(directory.url("file")), to: directory.url("p")).statistics }
        #expect(throws: SaveRefusal.self) { try PackageSaver.save(DirectorySource(directory.url("src")), to: directory.url("file")).statistics }
        #expect(throws: SaveRefusal.self) { try PackageSaver.save(DirectorySource(directory.url("src")), to: directory.url("src/inner")).statistics }
        #expect(throws: FileSystemError.self) { try PackageSaver.save(DirectorySource(directory.url("missing")), to: directory.url("p")).statistics }
    }
}

/// A thread-safe list, for callbacks.
final class LockedList<Element: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLockLike()
    private var storage: [Element] = []
    func append(_ element: Element) { lock.withLock { storage.append(element) } }
    var items: [Element] { lock.withLock { storage } }
}

/// A pthread mutex (tests avoid Foundation's NSLock to stay on the toolchain's core modules).
final class NSLockLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return try body()
    }
}
