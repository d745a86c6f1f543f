import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// The S3 transport against a real SeaweedFS: signing, conditional writes, ranges, errors.
@Suite("S3 transport") struct TransportTests {
    let server = SeaweedServer.shared

    func connection(_ configuration: S3Configuration? = nil) -> S3Connection {
        S3Connection(configuration: configuration ?? server.configuration(), counters: TransferCounters(), cancellation: nil)
    }

    @Test func putGetHeadDeleteRoundTrip() throws {
        let bucket = try server.makeBucket()
        let s3 = connection()
        let bytes = SeededBytes(seed: 1).bytesArray(3 << 20)
        let outcome = try s3.put(bucket: bucket, key: "a/b c/é+x", bytes: bytes)
        guard case .stored = outcome else { Issue.record("not stored: \(outcome)"); return }
        let got = try #require(try s3.getObject(bucket: bucket, key: "a/b c/é+x", limit: 8 << 20))
        #expect(got.bytes == bytes)
        let head = try #require(try s3.head(bucket: bucket, key: "a/b c/é+x"))
        #expect(head.size == Int64(bytes.count))
        let sink = MemorySink(limit: 1 << 20)
        try s3.get(bucket: bucket, key: "a/b c/é+x", range: 1000..<5000, into: sink)
        #expect(sink.bytes == Array(bytes[1000..<5000]))
        try s3.delete(bucket: bucket, key: "a/b c/é+x")
        #expect(try s3.head(bucket: bucket, key: "a/b c/é+x") == nil)
        #expect(try s3.getObject(bucket: bucket, key: "a/b c/é+x", limit: 10) == nil)
    }

    @Test func conditionalWritesAreHonoured() throws {
        let bucket = try server.makeBucket()
        let s3 = connection()
        guard case .stored(let etag?) = try s3.put(bucket: bucket, key: "head", bytes: [1], condition: .absent) else {
            Issue.record("first create failed"); return
        }
        #expect(try s3.put(bucket: bucket, key: "head", bytes: [2], condition: .absent) == .preconditionFailed)
        #expect(try s3.put(bucket: bucket, key: "head", bytes: [3], condition: .matching(etag: "\"0123\"")) == .preconditionFailed)
        guard case .stored = try s3.put(bucket: bucket, key: "head", bytes: [4], condition: .matching(etag: etag)) else {
            Issue.record("matching replace failed"); return
        }
        #expect(try s3.put(bucket: bucket, key: "head", bytes: [5], condition: .matching(etag: etag)) == .preconditionFailed)
        #expect(try s3.getObject(bucket: bucket, key: "head", limit: 10)?.bytes == [4])
    }

    @Test func wrongCredentialsAreRefusedInOneLine() throws {
        let bucket = try server.makeBucket()
        var configuration = server.configuration()
        configuration.credentials.secretAccessKey = "wrong"
        #expect {
            _ = try connection(configuration).getObject(bucket: bucket, key: "x", limit: 10)
        } throws: { error in
            (error as? RemoteError)?.kind == .credentialsRefused
        }
        configuration.credentials = S3Credentials(accessKeyID: "nobody", secretAccessKey: "x")
        #expect {
            _ = try connection(configuration).put(bucket: bucket, key: "x", bytes: [1])
        } throws: { error in
            (error as? RemoteError)?.kind == .credentialsRefused
        }
    }

    @Test func missingBucketAndUnreachableServer() throws {
        #expect {
            _ = try connection().getObject(bucket: "no-such-bucket-here", key: "x", limit: 10)
        } throws: { error in
            (error as? RemoteError)?.kind == .noSuchBucket
        }
        var configuration = server.configuration(attempts: 2)
        configuration.endpoint = "http://127.0.0.1:1"
        #expect {
            _ = try connection(configuration).getObject(bucket: "bucket", key: "x", limit: 10)
        } throws: { error in
            (error as? RemoteError)?.kind == .unreachable
        }
    }

    @Test func listingPagesThroughKeys() throws {
        let bucket = try server.makeBucket()
        let s3 = connection()
        for index in 0..<5 { _ = try s3.put(bucket: bucket, key: "p/k\(index)", bytes: [UInt8(index)]) }
        let first = try s3.list(bucket: bucket, prefix: "p/", maximum: 3)
        #expect(first.objects.map(\.key) == ["p/k0", "p/k1", "p/k2"])
        let token: String? = first.next
        #expect(token != nil)
        let second = try s3.list(bucket: bucket, prefix: "p/", maximum: 3, continuation: token)
        #expect(second.objects.map(\.key) == ["p/k3", "p/k4"])
        #expect(second.next == nil)
    }
}

extension SeededBytes {
    func bytesArray(_ count: Int) -> [UInt8] {
        var copy = self
        return copy.bytes(count)
    }
}
