import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("Chunk lists in scans and manifests")
struct ChunkManifestTests {
    static let mebibyte = 1 << 20

    /// A package with two large files (one exactly at the threshold), one just below it and
    /// a few small ones, all backdated so that the stat cache vouches for them.
    func makePackage(_ root: String) throws {
        try Files.makeDirectory(root + "/media")
        try Files.writeRandom(root + "/media/movie.bin", size: 9 * Self.mebibyte + 4321, seed: 60)
        try Files.writeRandom(root + "/media/exact.bin", size: 4 * Self.mebibyte, seed: 61)
        try Files.writeRandom(root + "/media/below.bin", size: 4 * Self.mebibyte - 1, seed: 62)
        for index in 0..<5 { try Files.write(root + "/page\(index).txt", "page \(index)") }
        let past = (Int64(time(nil)) - 100) * 1_000_000_000
        for path in ["media/movie.bin", "media/exact.bin", "media/below.bin"] + (0..<5).map({ "page\($0).txt" }) {
            try FileSystem.setModificationTime(root + "/" + path, past)
        }
    }

    /// `bytes` with its trailing checksum recomputed (to forge a well-framed file).
    func resealed(_ bytes: [UInt8]) -> [UInt8] {
        let body = Array(bytes.dropLast(16))
        return body + ContentHash.of(body).canonicalBytes
    }

    @Test("a scan records the chunk list of every file from the threshold on, computed in the hashing pass")
    func scanRecordsChunks() throws {
        let directory = try TemporaryDirectory("chunk-scan")
        try makePackage(directory.path)
        let snapshot = try TreeScanner(workers: 2).scan(directory.path).snapshot
        for entry in snapshot.entries {
            let path = directory.url(entry.path)
            if entry.kind == .regular && entry.size >= 4 * Self.mebibyte {
                let expected = try ContentHash.ofFileWithChunks(atPath: path, buffer: ChunkBuffer()).digest
                #expect(entry.chunks == expected.chunks && entry.hash == expected.hash, "\(entry.path)")
                #expect(entry.chunks?.totalLength == entry.size)
            } else {
                #expect(entry.chunks == nil, "\(entry.path)")
            }
        }
    }

    @Test("the manifest keeps chunk lists; the stat cache hands them back without reading the file")
    func roundTrip() throws {
        let directory = try TemporaryDirectory("chunk-manifest")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        #expect(try Files.read(directory.url(".pkgtool/index"))[8] == 2, "written as format version 2")
        let manifest = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(manifest.snapshot == scan.snapshot)
        let movie = try #require(scan.snapshot.entries.first { $0.path == "media/movie.bin" })
        #expect(movie.chunks != nil && manifest.chunks(for: "media/movie.bin") == movie.chunks)
        #expect(manifest.chunks(for: "media/below.bin") == nil && manifest.chunks(for: "nowhere") == nil)
        let status = try FileSystem.status(directory.url("media/movie.bin"))
        #expect(manifest.cachedContent(for: "media/movie.bin", status: status) == KnownContent(hash: movie.hash, chunks: movie.chunks))

        let again = try PackageScan.scan(directory.path)
        #expect(again.result.filesHashed == 0)
        #expect(again.snapshot == scan.snapshot, "chunk lists come from the manifest")
    }

    @Test("deltas carry the chunk lists of the files they upsert")
    func deltas() throws {
        let directory = try TemporaryDirectory("chunk-delta")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        try PackageManifest.writeIndex(scan.snapshot, packagePath: directory.path, durability: .none)
        let manifest = try #require(try PackageManifest.load(packagePath: directory.path))

        // Overwrite 1 MiB inside the movie and add a new large file.
        let moviePath = directory.url("media/movie.bin")
        var bytes = try Files.read(moviePath)
        var generator = SeededBytes(seed: 63)
        bytes.replaceSubrange(3_000_000..<3_000_000 + Self.mebibyte, with: generator.bytes(Self.mebibyte))
        try Files.write(moviePath, bytes)
        try Files.writeRandom(directory.url("media/new.bin"), size: 5 * Self.mebibyte, seed: 64)
        let current = try PackageScan.scan(directory.path, useManifest: false).snapshot
        // With the manifest, the changed movie is chunked with its recorded list as a hint: same result.
        let hinted = try PackageScan.scan(directory.path)
        #expect(hinted.result.hashedPaths.contains("media/movie.bin") && hinted.snapshot == current)
        let upserts = current.entries.filter { $0.kind == .directory || $0.path.hasPrefix("media/") && $0.path != "media/below.bin" && $0.path != "media/exact.bin" }
        let delta = manifest.encodedDelta(
            upserts: upserts, removals: [], newRootHash: current.rootHash, newEntryCount: current.entries.count,
            relinkWindow: nil)
        try AtomicFile.write(delta.bytes, to: directory.url(".pkgtool/\(delta.name)"), durability: .none)
        let loaded = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(loaded.snapshot == current)
        let newMovie = try #require(loaded.chunks(for: "media/movie.bin"))
        let oldMovie = try #require(manifest.chunks(for: "media/movie.bin"))
        let comparison = ChunkComparison(old: oldMovie, new: newMovie)
        #expect(comparison.changedChunkCount >= 1 && comparison.changedChunkCount <= 8)
        #expect(loaded.chunks(for: "media/new.bin")?.totalLength == Int64(5 * Self.mebibyte))
    }

    @Test("a version 1 manifest still loads, without chunk lists, and the next full write is version 2")
    func versionOne() throws {
        let directory = try TemporaryDirectory("chunk-v1")
        try makePackage(directory.path)
        let scan = try PackageScan.scan(directory.path)
        // Version 1 is version 2 without chunk lists: the same record layout.
        var entries = scan.snapshot.entries
        for index in entries.indices { entries[index].chunks = nil }
        let plain = TreeSnapshot(entries: entries, rootHash: scan.snapshot.rootHash)
        var bytes = PackageManifest.encodedIndex(plain)
        bytes[8] = 1
        let indexPath = directory.url(".pkgtool/index")
        try Files.makeDirectory(directory.url(".pkgtool"))
        try Files.write(indexPath, resealed(bytes))

        let manifest = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(manifest.snapshot == plain)
        #expect(manifest.chunks(for: "media/movie.bin") == nil)
        // The stat cache still vouches for the hashes; those files have no list until rehashed.
        let rescan = try PackageScan.scan(directory.path)
        #expect(rescan.result.filesHashed == 0 && rescan.snapshot == plain)
        // A version 2 delta chains onto the version 1 base and brings its chunk lists.
        let movie = try #require(scan.snapshot.entries.first { $0.path == "media/movie.bin" })
        let delta = manifest.encodedDelta(
            upserts: [movie], removals: [], newRootHash: plain.rootHash, newEntryCount: plain.entries.count,
            relinkWindow: nil)
        #expect(delta.bytes[8] == 2)
        try AtomicFile.write(delta.bytes, to: directory.url(".pkgtool/\(delta.name)"), durability: .none)
        let chained = try #require(try PackageManifest.load(packagePath: directory.path))
        #expect(chained.chunks(for: "media/movie.bin") == movie.chunks && chained.lastSequence == 1)
        let fresh = try PackageScan.scan(directory.path, useManifest: false)
        try PackageManifest.writeIndex(fresh.snapshot, packagePath: directory.path, durability: .none)
        #expect(try Files.read(indexPath)[8] == 2)
        #expect(try PackageManifest.load(packagePath: directory.path)?.chunks(for: "media/movie.bin") != nil)

        // A version 1 file claiming a chunk list is malformed.
        var claiming = PackageManifest.encodedIndex(scan.snapshot)
        claiming[8] = 1
        try Files.write(indexPath, resealed(claiming))
        #expect(throws: ManifestError.self) { try PackageManifest.load(packagePath: directory.path) }
    }

    @Test("a chunk list that does not add up to the file's size is refused, never trusted")
    func malformedChunkList() throws {
        let directory = try TemporaryDirectory("chunk-bad")
        try Files.writeRandom(directory.url("big.bin"), size: 5 * Self.mebibyte, seed: 65)
        let scan = try PackageScan.scan(directory.path)
        let chunks = try #require(scan.snapshot.entries[0].chunks)
        let good = PackageManifest.encodedIndex(scan.snapshot)
        // The chunk list is the record's tail: count, then (length, hash) per chunk.
        let listStart = good.count - 16 - 4 - 20 * chunks.count
        #expect(good[listStart..<listStart + 4].elementsEqual(withUnsafeBytes(of: UInt32(chunks.count).littleEndian) { Array($0) }))
        let indexPath = directory.url(".pkgtool/index")
        try Files.makeDirectory(directory.url(".pkgtool"))
        var cases: [[UInt8]] = []
        var shorter = good
        shorter[listStart + 4] &+= 1  // first length off by one: the sum no longer matches
        cases.append(shorter)
        var zero = good
        for offset in 0..<4 { zero[listStart + offset] = 0 }  // an empty list
        cases.append(zero)
        var huge = good
        huge[listStart + 3] = 0x7F  // more chunks than the file holds
        cases.append(huge)
        for bytes in cases {
            try Files.write(indexPath, resealed(bytes))
            #expect(throws: ManifestError.self) { try PackageManifest.load(packagePath: directory.path) }
        }
        try Files.write(indexPath, good)
        #expect(try PackageManifest.load(packagePath: directory.path)?.chunks(for: "big.bin") == chunks)
    }
}
