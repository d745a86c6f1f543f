import Synchronization
@testable import PackageCore

/// The sweep oracle's chunk lists, by content: a file's chunk list is a pure function of
/// its bytes (Specs/hashing.md, "Chunk lists"), and its XXH3-128 names those bytes, as
/// the oracle's old-or-new test already relies on. The first file seen with a content is
/// chunked for real; every later one with the same hash gets that list without searching
/// its bytes again. A sweep checks a few thousand packages holding the same two or three
/// large files.
final class ChunkListsByContent: Sendable {
    private let lists = Mutex<[ContentHash: ChunkList?]>([:])

    /// The chunk list of the file at `path`, whose content hash a scan gave as `hash`.
    func list(of path: String, hash: ContentHash) throws -> ChunkList? {
        if let known = lists.withLock({ $0[hash] }) { return known }
        let (digest, _) = try ContentHash.ofFileWithChunks(atPath: path, buffer: ChunkBuffer())
        guard digest.hash == hash else {
            // Changed since the scan: no list to remember, and one the caller will find wrong.
            return digest.chunks
        }
        lists.withLock { $0[hash] = digest.chunks }
        return digest.chunks
    }

    /// A package's tree scanned without its manifest and without chunk lists (the hashes
    /// read afresh; the lists come from `list(of:hash:)`).
    static func scanWithoutLists(_ package: String) throws -> TreeScanner.Result {
        var scanner = TreeScanner(workers: ProcessInfoCores.active, excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        scanner.chunking.fileThreshold = .max
        return try scanner.scan(package)
    }
}
