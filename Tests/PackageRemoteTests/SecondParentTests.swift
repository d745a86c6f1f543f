import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// A merge pushed by `sync` records two parents (issue 26): format 2 of the version
/// manifest carries the second after the fixed header, the head record an optional
/// `second_parent`; everything else is written and read as before.
@Suite("Second parents") struct SecondParentTests {
    let first = SHA256Digest.of(Array("first parent".utf8))
    let second = SHA256Digest.of(Array("second parent".utf8))

    func manifest(secondParent: SHA256Digest?, parent: SHA256Digest? = nil, sequence: Int = 2) -> VersionManifest {
        let hash = ContentHash.of(Array("x".utf8))
        var manifest = VersionManifest(
            sequence: sequence, time: 5, parent: sequence > 1 ? parent ?? first : nil, secondParent: secondParent,
            rootHash: ContentHash(high: 0, low: 0),
            entries: [
                RemoteEntry(
                    path: "a", kind: .directory, permissions: 0o755, size: 0, modificationTime: 1,
                    contentHash: ContentHash(high: 0, low: 0), linkTarget: nil, blobs: []),
                RemoteEntry(
                    path: "a/f", kind: .regular, permissions: 0o644, size: 1, modificationTime: 2, contentHash: hash,
                    linkTarget: nil,
                    blobs: [BlobLocation(digest: SHA256Digest.of([1]), pack: SHA256Digest.of([2]), offset: 0, length: 1)]),
            ])
        manifest.rootHash = manifest.snapshot().rootHash
        return manifest
    }

    @Test func aVersionWithoutSecondParentKeepsFormat1() throws {
        let bytes = manifest(secondParent: nil).encoded()
        #expect(bytes[8] == 1 && bytes[9...11].allSatisfy { $0 == 0 })
        #expect(VersionManifest.headerLength(startingWith: Array(bytes.prefix(12))) == 128)
        let decoded = try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes))
        #expect(decoded.secondParent == nil && decoded.parent == first)
    }

    @Test func aMergeIsFormat2AndRoundTrips() throws {
        let merge = manifest(secondParent: second)
        let bytes = merge.encoded()
        let id = SHA256Digest.of(bytes)
        #expect(bytes[8] == 2)
        #expect(Array(bytes[128..<160]) == second.bytes)
        #expect(VersionManifest.headerLength(startingWith: Array(bytes.prefix(12))) == 160)
        let decoded = try VersionManifest.decodedBothWays(bytes, id: id)
        #expect(decoded.entries == merge.entries)
        #expect(decoded.summary(id: id).secondParent == second)
        #expect(decoded.summary(id: id).parent == first)
        let header = try VersionManifest.decodeHeader(Array(bytes.prefix(160)), id: id)
        #expect(header.summary == merge.summary(id: id) && header.bodyOffset == 160)
        // The fixed header alone is not enough for a merge: refused, never misread.
        #expect(throws: RemoteError.self) { try VersionManifest.decodeHeader(Array(bytes.prefix(128)), id: id) }

        // Every truncation and every flipped byte is refused, except those only the id
        // covers: the number, the time, the parents.
        for length in 0..<bytes.count {
            #expect(throws: RemoteError.self, "length \(length)") { try VersionManifest.decodedBothWays(Array(bytes.prefix(length)), id: id) }
        }
        let unchecked = Set(16..<32).union(80..<112).union(128..<160)
        for index in bytes.indices where !unchecked.contains(index) {
            var damaged = bytes
            damaged[index] ^= 0x5A
            #expect(throws: RemoteError.self, "byte \(index)") { try VersionManifest.decodedBothWays(damaged, id: id) }
        }
    }

    @Test func impossibleSecondParentsAreRefused() throws {
        let zero = [UInt8](repeating: 0, count: 32).withUnsafeBytes { SHA256Digest(bytes: $0) }
        let cases: [(String, VersionManifest)] = [
            ("zero", manifest(secondParent: zero)),
            ("the first parent again", manifest(secondParent: first)),
            ("a first version", manifest(secondParent: second, sequence: 1)),
        ]
        for (name, crafted) in cases {
            let bytes = crafted.encoded()
            let error = #expect(throws: RemoteError.self, "\(name)") { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
            #expect(error?.kind == .verificationFailed, "\(name)")
        }
        // Format 0, and formats this pkgtool does not know: refused, the latter as newer.
        var bytes = manifest(secondParent: nil).encoded()
        bytes[8] = 0
        #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        bytes[8] = 3
        let newer = #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        #expect(newer?.kind == .notARemote && newer?.message.contains("has format 3, newer than this pkgtool's") == true)
    }

    @Test func headRecordsCarryTheSecondParentWhenThereIsOne() throws {
        let location = RemoteLocation(bucket: "b", prefix: "p")
        let one = VersionSummary(
            id: first, sequence: 1, time: 1, parent: nil, rootHash: ContentHash.empty, size: 1, entryCount: 1)
        let two = VersionSummary(
            id: SHA256Digest.of([2]), sequence: 2, time: 2, parent: first, secondParent: second, rootHash: ContentHash.empty,
            size: 1, entryCount: 1)
        let record = HeadRecord(head: one, history: []).advanced(to: two)
        let bytes = record.encoded()
        #expect(try HeadRecord.decode(bytes, location: location) == record)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"second_parent\":\"\(second)\""))
        // Without a merge the record is what format 1 always was: no such key.
        let plain = HeadRecord(head: one, history: []).encoded()
        #expect(!String(decoding: plain, as: UTF8.self).contains("second_parent"))

        // A record written before second parents existed still reads.
        let old = """
            {"format":"pkgtool-remote","format_version":1,"head":{"entries":1,"id":"\(two.id)","parent":"\(first)",\
            "root":"\(ContentHash.empty)","sequence":2,"size":1,"time_ns":2},"history":[{"entries":1,"id":"\(first)",\
            "root":"\(ContentHash.empty)","sequence":1,"size":1,"time_ns":1}]}
            """
        let decoded = try #require(try HeadRecord.decode(Array(old.utf8), location: location))
        #expect(decoded.head.secondParent == nil && decoded.head.parent == first)

        // A second parent that is not an id, that is the first again, or on a first version: damaged.
        for (name, bad) in [
            ("not hex", old.replacingOccurrences(of: "\"parent\":\"\(first)\"", with: "\"parent\":\"\(first)\",\"second_parent\":\"xyz\"")),
            ("the first again", old.replacingOccurrences(of: "\"parent\":\"\(first)\"", with: "\"parent\":\"\(first)\",\"second_parent\":\"\(first)\"")),
            ("on a first version", old.replacingOccurrences(of: "\"id\":\"\(first)\",", with: "\"id\":\"\(first)\",\"second_parent\":\"\(second)\",")),
        ] {
            #expect(bad != old, "\(name)")
            let error = #expect(throws: RemoteError.self, "\(name)") { try HeadRecord.decode(Array(bad.utf8), location: location) }
            #expect(error?.kind == .verificationFailed, "\(name)")
        }
    }

    @Test func theFuzzerSeedsHoldAMerge() throws {
        let samples = UntrustedRemoteObjects.samples()
        let merge = try #require(samples.first { $0.name == "merge" })
        #expect(try UntrustedRemoteObjects.versionEntryCount(merge.bytes) == 2)
        let head = try #require(samples.first { $0.name == "merge-head" })
        #expect(try UntrustedRemoteObjects.headSequence(head.bytes) == 2)
        let body = try #require(samples.first { $0.name == "merge-body" })
        #expect(body.bytes.count > 3)
    }
}
