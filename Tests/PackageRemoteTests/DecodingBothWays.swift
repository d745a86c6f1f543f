import Foundation
import PackageCore
import Testing

@testable import PackageRemote

extension VersionManifest {
    /// Decodes `bytes` as a pull does (`decode`) and as a diff does (`decodeTree`, straight
    /// into a tree, from memory and from a file a piece at a time): they must accept the
    /// same manifests, and give the same tree.
    /// - Throws: the pull decoder's refusal.
    static func decodedBothWays(_ bytes: [UInt8], id: SHA256Digest) throws -> VersionManifest {
        let asTree = Result { () throws(RemoteError) in try decodeTree(bytes, id: id) }
        let asVersion = Result { () throws(RemoteError) in try decode(bytes, id: id) }
        // The third way: a diff reading the cache's copy a piece at a time, which also checks
        // the file's SHA-256 (the other two leave that to their caller).
        let fromFile = try decodedFromFile(bytes, id: id)
        if case .success = fromFile, SHA256Digest.of(bytes) != id {
            Issue.record("a diff reading the cached file accepts bytes that are not named by the id")
        }
        switch (asVersion, asTree) {
        case (.success(let manifest), .success(let decoded)):
            #expect(decoded.tree == manifest.snapshot(), "the diff's tree differs from the pull's")
            #expect(decoded.summary == manifest.summary(id: id))
            if SHA256Digest.of(bytes) == id {
                switch fromFile {
                case .success(let read):
                    #expect(read.tree == decoded.tree, "the tree read from the file differs from the one decoded in memory")
                    #expect(read.summary == decoded.summary)
                case .failure(let error):
                    Issue.record("a diff reading the cached file refuses what a pull accepts: \(error)")
                }
            }
            return manifest
        case (.failure(let error), .failure):
            if case .success = fromFile { Issue.record("a diff reading the cached file accepts what a pull refuses") }
            throw error
        case (.success(let manifest), .failure(let error)):
            Issue.record("a diff refuses what a pull accepts: \(error.message)")
            return manifest
        case (.failure(let error), .success):
            Issue.record("a diff accepts what a pull refuses: \(error.message)")
            throw error
        }
    }

    /// `decodeTree(file:id:)` of `bytes` written to a file of their own.
    private static func decodedFromFile(_ bytes: [UInt8], id: SHA256Digest) throws
        -> Result<(summary: VersionSummary, tree: TreeSnapshot), any Error>
    {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        return Result { try decodeTree(file: path, id: id) }
    }
}
