import Foundation
import PackageCore
import Testing

@testable import PackageRemote

/// The head record's prune keys and the blob index, decoded as hostile input (no server).
@Suite("Prune formats") struct PruneFormatTests {
    static let location = RemoteLocation(bucket: "docs", prefix: "notes")

    static func summary(_ sequence: Int, parent: SHA256Digest?) -> VersionSummary {
        VersionSummary(
            id: SHA256Digest.of(Array("version \(sequence)".utf8)), sequence: sequence, time: Int64(sequence) * 1_000_000_000,
            parent: parent, rootHash: ContentHash(high: UInt64(sequence), low: 7), size: 10, entryCount: 2)
    }

    static func record() -> HeadRecord {
        let first = summary(1, parent: nil)
        let second = summary(2, parent: first.id)
        return HeadRecord(head: summary(3, parent: second.id), history: [second, first])
    }

    @Test func aRecordWithoutPruneKeysKeepsFormatOneBytes() throws {
        let bytes = Self.record().encoded()
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"format_version\":1"))
        #expect(!text.contains("pruned") && !text.contains("deleting") && !text.contains("prunes"))
        #expect(try HeadRecord.decode(bytes, location: Self.location) == Self.record())
    }

    /// The bytes of a HEAD are a wire format other pkgtools read: compact JSON, keys in byte
    /// order, absent optionals left out, one newline after. These literals are what
    /// Foundation's JSONEncoder (`.sortedKeys`) wrote before pkgtool had one JSON writer.
    @Test func theRecordsBytesAreWhatPkgtoolAlwaysWrote() throws {
        let first = Self.summary(1, parent: nil)
        let second = Self.summary(2, parent: first.id)
        var merge = Self.summary(3, parent: second.id)
        merge.secondParent = SHA256Digest.of([9])
        func summary(_ s: VersionSummary) -> String {
            "{\"entries\":2,\"id\":\"\(s.id)\"" + (s.parent.map { ",\"parent\":\"\($0)\"" } ?? "")
                + ",\"root\":\"\(s.rootHash)\"" + (s.secondParent.map { ",\"second_parent\":\"\($0)\"" } ?? "")
                + ",\"sequence\":\(s.sequence),\"size\":10,\"time_ns\":\(s.time)}"
        }
        let plain = Self.record()
        let plainText = "{\"format\":\"pkgtool-remote\",\"format_version\":1,\"head\":\(summary(plain.head)),"
            + "\"history\":[\(summary(plain.history[0])),\(summary(plain.history[1]))]}\n"
        #expect(String(decoding: plain.encoded(), as: UTF8.self) == plainText)
        #expect(try HeadRecord.decode(Array(plainText.utf8), location: Self.location) == plain)

        var pruned = HeadRecord(head: merge, history: [second, first])
        pruned.pruned = [1...1]
        pruned.index = SHA256Digest.of([1])
        pruned.deleting = [SHA256Digest.of([2]), SHA256Digest.of([3])]
        pruned.prunes = 1
        let prunedText = "{\"deleting\":[\"\(SHA256Digest.of([2]))\",\"\(SHA256Digest.of([3]))\"],"
            + "\"format\":\"pkgtool-remote\",\"format_version\":2,\"head\":\(summary(merge)),"
            + "\"history\":[\(summary(second)),\(summary(first))],\"index\":\"\(SHA256Digest.of([1]))\","
            + "\"pruned\":[[1,1]],\"prunes\":1}\n"
        #expect(String(decoding: pruned.encoded(), as: UTF8.self) == prunedText)
        #expect(try HeadRecord.decode(Array(prunedText.utf8), location: Self.location) == pruned)
    }

    @Test func pruneKeysMakeFormatTwoAndRoundTrip() throws {
        var record = Self.record()
        record.pruned = [1...2]
        record.index = SHA256Digest.of([1, 2, 3])
        record.deleting = [SHA256Digest.of([4]), SHA256Digest.of([5])]
        record.prunes = 2
        let bytes = record.encoded()
        #expect(String(decoding: bytes, as: UTF8.self).contains("\"format_version\":2"))
        let decoded = try #require(try HeadRecord.decode(bytes, location: Self.location))
        #expect(decoded == record)
        #expect(decoded.isPruned(1) && decoded.isPruned(2) && !decoded.isPruned(3))
        // A push on top keeps what the prune recorded.
        let advanced = decoded.advanced(to: Self.summary(4, parent: record.head.id))
        #expect(advanced.pruned == record.pruned && advanced.index == record.index && advanced.prunes == 2)
    }

    @Test func damagedPruneKeysAreRefused() throws {
        let base = String(decoding: Self.record().encoded(), as: UTF8.self)
        func with(_ replacement: String, format: Int = 2) -> [UInt8] {
            Array(
                base.replacingOccurrences(of: "\"format_version\":1", with: "\"format_version\":\(format)")
                    .replacingOccurrences(of: "\"history\"", with: replacement + ",\"history\"").utf8)
        }
        for bad in [
            "\"pruned\":[[2,1]]", "\"pruned\":[[0,1]]", "\"pruned\":[[1,3]]", "\"pruned\":[[1,1],[1,2]]", "\"pruned\":[[1]]",
            "\"index\":\"xyz\"", "\"deleting\":[\"00\"]", "\"prunes\":0",
        ] {
            #expect(throws: RemoteError.self, "\(bad)") { try HeadRecord.decode(with(bad), location: Self.location) }
        }
        // Format 1 cannot say what was pruned.
        #expect(throws: RemoteError.self) { try HeadRecord.decode(with("\"pruned\":[[1,1]]", format: 1), location: Self.location) }
        // A newer format is refused as one.
        let newer = try #require(
            #expect(throws: RemoteError.self) { try HeadRecord.decode(with("\"prunes\":1", format: 3), location: Self.location) })
        #expect(newer.message.contains("newer pkgtool"))
    }

    @Test func theBlobIndexRoundTripsAndRefusesDamage() throws {
        var index = BlobIndex()
        for value in UInt8(0)..<20 {
            let digest = SHA256Digest.of([value])
            index.locations[digest] = BlobLocation(
                digest: digest, pack: SHA256Digest.of([value, 1]), offset: UInt32(value) * 10, length: 10)
        }
        let bytes = index.encoded()
        let id = SHA256Digest.of(bytes)
        #expect(try BlobIndex.decode(bytes, id: id) == index)
        #expect(bytes.count == BlobIndex.headerSize + 20 * BlobIndex.recordSize)
        // Truncated, a count that lies, records out of order, another format.
        #expect(throws: RemoteError.self) { try BlobIndex.decode(Array(bytes.dropLast()), id: id) }
        var lying = bytes
        lying[12] = 21
        #expect(throws: RemoteError.self) { try BlobIndex.decode(lying, id: id) }
        var swapped = bytes
        let first = BlobIndex.headerSize
        let second = first + BlobIndex.recordSize
        swapped.replaceSubrange(first..<second, with: bytes[second..<(second + BlobIndex.recordSize)])
        swapped.replaceSubrange(second..<(second + BlobIndex.recordSize), with: bytes[first..<second])
        #expect(throws: RemoteError.self) { try BlobIndex.decode(swapped, id: id) }
        var format = bytes
        format[8] = 2
        #expect(throws: RemoteError.self) { try BlobIndex.decode(format, id: id) }
        // A manifest's blob is read from the index's place.
        let moved = try #require(index.locations.values.first)
        let old = BlobLocation(digest: moved.digest, pack: SHA256Digest.of([9, 9]), offset: 0, length: 10)
        #expect(index.place(old) == moved)
    }

    /// An id prefix made only of digits is also a number: both readings are looked for along
    /// the history, and a number that names no version does not hide the prefix.
    @Test func anIdPrefixOfDigitsIsFoundAlongTheHistory() throws {
        func version(_ sequence: Int, id hex: String, parent: SHA256Digest?) throws -> VersionSummary {
            VersionSummary(
                id: try #require(SHA256Digest(hex: hex)), sequence: sequence, time: Int64(sequence), parent: parent,
                rootHash: ContentHash(high: UInt64(sequence), low: 1), size: 1, entryCount: 1)
        }
        let first = try version(1, id: "a1" + String(repeating: "0", count: 62), parent: nil)
        let second = try version(2, id: "85641910" + String(repeating: "e", count: 56), parent: first.id)
        let third = try version(3, id: "3bcd" + String(repeating: "f", count: 60), parent: second.id)
        let record = HeadRecord(head: third, history: [second, first])
        // Nothing is fetched: the record holds every version.
        let configuration = S3Configuration(
            endpoint: "http://127.0.0.1:9", pathStyle: true, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: "unused", secretAccessKey: "unused"))
        let options = RemoteOptions(configuration: configuration, cacheDirectory: "/nonexistent-pkgtool-cache")
        let store = RemoteStore(location: Self.location, options: options)
        let connection = S3Connection(configuration: configuration, counters: TransferCounters(), cancellation: nil)
        func resolve(_ reference: String) throws -> Int {
            try LogOperation.resolve(reference, store: store, connection: connection, head: record).sequence
        }
        #expect(try resolve("85641910") == 2)
        #expect(try resolve("8564") == 2)
        #expect(try resolve("2") == 2)
        #expect(try resolve("3bcd") == 3)
        #expect(throws: RemoteError.self) { try resolve("9999") }
    }
}
