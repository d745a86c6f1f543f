import PackageCore
import Testing

@testable import PackageRemote

extension VersionManifest {
    /// Decodes `bytes` as a pull does (`decode`) and as a diff does (`decodeTree`, straight
    /// into a tree): the two must accept the same manifests, and give the same tree.
    /// - Throws: the pull decoder's refusal.
    static func decodedBothWays(_ bytes: [UInt8], id: SHA256Digest) throws -> VersionManifest {
        let asTree = Result { () throws(RemoteError) in try decodeTree(bytes, id: id) }
        let asVersion = Result { () throws(RemoteError) in try decode(bytes, id: id) }
        switch (asVersion, asTree) {
        case (.success(let manifest), .success(let decoded)):
            #expect(decoded.tree == manifest.snapshot(), "the diff's tree differs from the pull's")
            #expect(decoded.summary == manifest.summary(id: id))
            return manifest
        case (.failure(let error), .failure):
            throw error
        case (.success(let manifest), .failure(let error)):
            Issue.record("a diff refuses what a pull accepts: \(error.message)")
            return manifest
        case (.failure(let error), .success):
            Issue.record("a diff accepts what a pull refuses: \(error.message)")
            throw error
        }
    }
}
