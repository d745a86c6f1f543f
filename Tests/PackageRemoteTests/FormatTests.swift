import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// Signing, URLs and the store's formats, without a server.
@Suite("Remote formats") struct FormatTests {
    @Test func sigV4MatchesAWSsDocumentedExample() {
        // "Example: GET Object" of AWS's SigV4 documentation for S3.
        let signer = SigV4Signer(
            credentials: S3Credentials(
                accessKeyID: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
            region: "us-east-1")
        let headers = signer.sign(
            method: "GET", path: "/test.txt", query: [], host: "examplebucket.s3.amazonaws.com",
            headers: [("Range", "bytes=0-9")], payloadHash: SHA256Digest.empty.description, time: 1_369_353_600)
        let authorization = headers.first { $0.name == "Authorization" }?.value
        #expect(
            authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    @Test func sha256KnownAnswers() {
        #expect(SHA256Digest.empty.description == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256Digest.of(Array("abc".utf8)).description == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let digest = SHA256Digest.of(Array("abc".utf8))
        #expect(SHA256Digest(hex: digest.description) == digest)
        #expect(SHA256Digest(hex: "xyz") == nil)
    }

    @Test func remoteURLsAreParsedStrictly() throws {
        let location = try RemoteLocation(parsing: "s3://my-bucket.1/a/b c/é/")
        #expect(location.bucket == "my-bucket.1")
        #expect(location.prefix == "a/b c/é")
        #expect(location.key("HEAD") == "a/b c/é/HEAD")
        #expect(try RemoteLocation(parsing: "s3://bucket").prefix == "")
        for bad in ["s3:/b/x", "b/x", "s3://", "s3://B/x", "s3://a_b/x", "s3://-ab/x", "s3://ab/x", "s3://abc//x", "s3://abc/./x", "s3://abc/x/..", "s3://abc/x\u{1}y"] {
            #expect(throws: RemoteError.self, "\(bad)") { try RemoteLocation(parsing: bad) }
        }
        let configuration = S3Configuration(
            endpoint: "http://127.0.0.1:8333", pathStyle: true, region: "us-east-1",
            credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"))
        let address = configuration.address(bucket: "bucket", key: "a/b c/é+$")
        #expect(address.url == "http://127.0.0.1:8333/bucket/a/b%20c/%C3%A9%2B%24")
        #expect(address.host == "127.0.0.1:8333")
        var aws = configuration
        aws.endpoint = "https://s3.eu-west-1.amazonaws.com"
        aws.pathStyle = false
        #expect(aws.address(bucket: "bucket", key: "k").url == "https://bucket.s3.eu-west-1.amazonaws.com/k")
    }

    @Test func theEnvironmentConfiguresTheStore() throws {
        let base = ["AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"]
        let aws = try S3Configuration.fromEnvironment(base)
        #expect(aws.endpoint == "https://s3.us-east-1.amazonaws.com")
        #expect(!aws.pathStyle)
        var environment = base
        environment["AWS_DEFAULT_REGION"] = "eu-central-1"
        environment["AWS_ENDPOINT_URL"] = "http://localhost:9000/"
        environment["AWS_SESSION_TOKEN"] = "token"
        let local = try S3Configuration.fromEnvironment(environment)
        #expect(local.endpoint == "http://localhost:9000")
        #expect(local.pathStyle)
        #expect(local.region == "eu-central-1")
        #expect(local.credentials.sessionToken == "token")
        #expect(try S3Configuration.fromEnvironment(environment, endpoint: "https://x.example").endpoint == "https://x.example")
        #expect(throws: RemoteError.self) { try S3Configuration.fromEnvironment([:]) }
        #expect(throws: RemoteError.self) { try S3Configuration.fromEnvironment(base, endpoint: "localhost:9000") }
        environment["AWS_CA_BUNDLE"] = "/no/such/bundle.pem"
        #expect(throws: RemoteError.self) { try S3Configuration.fromEnvironment(environment) }
    }

    func sampleManifest() -> VersionManifest {
        let pack = SHA256Digest.of([1])
        func blob(_ seed: UInt8, _ offset: UInt32, _ length: UInt32) -> BlobLocation {
            BlobLocation(digest: SHA256Digest.of([seed]), pack: pack, offset: offset, length: length)
        }
        let fileHash = ContentHash.of(Array("x".utf8))
        let entries = [
            RemoteEntry(path: "a", kind: .directory, permissions: 0o755, size: 0, modificationTime: 1, contentHash: ContentHash(high: 0, low: 0), linkTarget: nil, blobs: []),
            RemoteEntry(path: "a/f", kind: .regular, permissions: 0o644, size: 30, modificationTime: 2, contentHash: fileHash, linkTarget: nil, blobs: [blob(2, 0, 10), blob(3, 10, 20)]),
            RemoteEntry(path: "a/l", kind: .symbolicLink, permissions: 0o777, size: 1, modificationTime: 3, contentHash: ContentHash.of(Array("f".utf8)), linkTarget: "f", blobs: []),
            RemoteEntry(path: "e", kind: .regular, permissions: 0o755, size: 0, modificationTime: 4, contentHash: ContentHash.empty, linkTarget: nil, blobs: []),
        ]
        var manifest = VersionManifest(sequence: 2, time: 5, parent: SHA256Digest.of([9]), rootHash: ContentHash(high: 0, low: 0), entries: entries)
        manifest.rootHash = manifest.snapshot().rootHash
        return manifest
    }

    @Test func manifestsRoundTripAndDamageIsRefused() throws {
        let manifest = sampleManifest()
        let bytes = manifest.encoded()
        let id = SHA256Digest.of(bytes)
        let decoded = try VersionManifest.decodedBothWays(bytes, id: id)
        #expect(decoded.entries == manifest.entries)
        #expect(decoded.summary(id: id) == manifest.summary(id: id))
        #expect(try VersionManifest.decodeHeader(Array(bytes.prefix(128)), id: id).summary == manifest.summary(id: id))

        // Every truncation and every single flipped byte is refused, never a trap.
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(Array(bytes.prefix(length)), id: id) }
        }
        // Only the number, the time and the parent's id cannot be checked by decoding alone:
        // the id (the SHA-256 of the bytes) catches them when the manifest is fetched.
        let unchecked = Set(16..<32).union(80..<112)
        for index in bytes.indices where !unchecked.contains(index) {
            var damaged = bytes
            damaged[index] ^= 0x5A
            #expect(throws: RemoteError.self, "byte \(index)") { try VersionManifest.decodedBothWays(damaged, id: id) }
            #expect(!manifest.isEncoded(as: damaged, id: SHA256Digest.of(damaged)), "byte \(index)")
        }
    }

    /// The body is deflated as it is written, in pieces: a manifest of several pieces (and
    /// a merge's longer header) reads back as written.
    @Test func aManifestOfManyPiecesRoundTrips() throws {
        let packs = (0..<3).map { SHA256Digest.of([UInt8($0), 0xAA]) }
        var entries = [
            RemoteEntry(path: "d", kind: .directory, permissions: 0o755, size: 0, modificationTime: 1, contentHash: ContentHash(high: 0, low: 0), linkTarget: nil, blobs: [])
        ]
        for index in 0..<4_000 {  // about 90 bytes each: more than one 256 KiB piece
            let bytes = withUnsafeBytes(of: UInt32(index)) { Array($0) }
            let blob = BlobLocation(digest: SHA256Digest.of(bytes), pack: packs[index % 3], offset: UInt32(index), length: 1)
            entries.append(
                RemoteEntry(
                    path: "d/file-\(100_000 + index)", kind: .regular, permissions: 0o644, size: 1, modificationTime: Int64(index),
                    contentHash: ContentHash.of(bytes), linkTarget: nil, blobs: [blob]))
        }
        for secondParent in [nil, SHA256Digest.of([7])] {
            var manifest = VersionManifest(
                sequence: 3, time: 5, parent: SHA256Digest.of([9]), secondParent: secondParent,
                rootHash: ContentHash(high: 0, low: 0), entries: entries)
            manifest.rootHash = manifest.snapshot().rootHash
            let bytes = manifest.encoded()
            let id = SHA256Digest.of(bytes)
            let decoded = try VersionManifest.decodedBothWays(bytes, id: id)
            #expect(decoded.entries == manifest.entries)
            #expect(decoded.summary(id: id) == manifest.summary(id: id))
            #expect(manifest.isEncoded(as: bytes, id: id))
        }
    }

    /// A push checks the bytes it is about to store against its own entries, as they inflate.
    @Test func aPushChecksItsEncodingEntryByEntry() {
        let manifest = sampleManifest()
        let bytes = manifest.encoded()
        #expect(manifest.isEncoded(as: bytes, id: SHA256Digest.of(bytes)))
        #expect(!manifest.isEncoded(as: Array(bytes.dropLast()), id: SHA256Digest.of(Array(bytes.dropLast()))))
        // Any field of any entry that differs, the name's bytes included: not this manifest.
        func differing(_ change: (inout RemoteEntry) -> Void, at index: Int) -> VersionManifest {
            var other = manifest
            change(&other.entries[index])
            return other
        }
        let others = [
            differing({ $0.modificationTime += 1 }, at: 3),
            differing({ $0.permissions = 0o600 }, at: 3),
            differing({ $0.blobs = $0.blobs.dropLast() }, at: 1),
            differing({ $0.linkTarget = "g" }, at: 2),
        ]
        for other in others {
            #expect(!other.isEncoded(as: bytes, id: SHA256Digest.of(bytes)))
        }
        // Canonical twins: "é" precomposed in the entries, decomposed in the bytes.
        var precomposed = manifest
        precomposed.entries[3].path = "\u{e9}"
        var decomposed = manifest
        decomposed.entries[3].path = "e\u{301}"
        decomposed.rootHash = decomposed.computedRootHash()
        precomposed.rootHash = decomposed.rootHash
        let twinBytes = decomposed.encoded()
        #expect(decomposed.isEncoded(as: twinBytes, id: SHA256Digest.of(twinBytes)))
        #expect(!precomposed.isEncoded(as: twinBytes, id: SHA256Digest.of(twinBytes)))
    }

    @Test func manifestsWithUnsafePathsAreRefused() throws {
        for path in ["../x", "a/../../x", "/abs", "a//b", ".pkgtool/index", "a/./b", ""] {
            var manifest = sampleManifest()
            manifest.entries = [
                RemoteEntry(path: path, kind: .regular, permissions: 0o644, size: 0, modificationTime: 0, contentHash: ContentHash.empty, linkTarget: nil, blobs: [])
            ]
            manifest.rootHash = manifest.snapshot().rootHash
            let bytes = manifest.encoded()
            #expect(throws: RemoteError.self, "\(path)") { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        }
        // Children before their directory, and a file whose blobs do not add up.
        var manifest = sampleManifest()
        manifest.entries.removeFirst()
        var bytes = manifest.encoded()
        #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        manifest = sampleManifest()
        manifest.entries[1].size = 31
        bytes = manifest.encoded()
        #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
    }

    /// The attack an outside audit found: a folder `e\u{301}` (NFD), a link `é` (NFC) to a
    /// folder outside, then `é/.ssh/authorized_keys`. Swift's `String ==` takes the two names
    /// for one, Linux does not: the decoder must see that `é` is no directory.
    @Test func aLinkCanonicallyEqualToAFolderIsNoParent() throws {
        let decomposed = "e\u{301}"
        let precomposed = "\u{e9}"
        #expect(decomposed == precomposed)  // Swift's view; the bytes differ
        func entry(_ path: String, _ kind: FileKind, target: String? = nil) -> RemoteEntry {
            RemoteEntry(
                path: path, kind: kind, permissions: kind == .directory ? 0o755 : 0o644,
                size: kind == .symbolicLink ? Int64(target!.utf8.count) : 0, modificationTime: 0,
                contentHash: kind == .symbolicLink ? ContentHash.of(Array(target!.utf8)) : (kind == .regular ? ContentHash.empty : ContentHash(high: 0, low: 0)),
                linkTarget: target, blobs: [])
        }
        for target in ["/tmp/outside", "../outside"] {
            var manifest = sampleManifest()
            manifest.entries = [
                entry(decomposed, .directory),
                entry(precomposed, .symbolicLink, target: target),
                entry(precomposed + "/.ssh", .directory),
                entry(precomposed + "/.ssh/authorized_keys", .regular),
            ].sorted { PathOrder.pathLess($0.path, $1.path) }
            // (No root hash can be computed for a tree that is not one; the decoder refuses
            // the entries before it compares hashes.)
            let bytes = manifest.encoded()
            let error = #expect(throws: RemoteError.self, "\(target)") { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
            #expect(error?.message.contains("has no parent directory entry") == true, "\(String(describing: error))")
        }
        // Twins as two real folders, each with a file, are a valid version and keep both.
        var manifest = sampleManifest()
        manifest.entries = [
            entry(decomposed, .directory), entry(decomposed + "/f", .regular),
            entry(precomposed, .directory), entry(precomposed + "/f", .regular),
        ].sorted { PathOrder.pathLess($0.path, $1.path) }
        manifest.rootHash = manifest.snapshot().rootHash
        let bytes = manifest.encoded()
        let decoded = try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes))
        #expect(decoded.entries.map { Array($0.path.utf8) } == manifest.entries.map { Array($0.path.utf8) })
        // Each twin folder counts only its own file: the tree hash tells the twins apart.
        let snapshot = decoded.snapshot()
        #expect(snapshot.entries.filter { $0.kind == .directory }.map(\.descendantCount) == [1, 1])
    }

    /// A header's claim is never what memory follows: a tiny object claiming a 1 GiB body is
    /// refused before inflating, while the most compressible real version (empty files,
    /// about 125-fold) stays inside the bound.
    @Test func aBodyClaimBeyondItsInflationBoundIsRefused() throws {
        var manifest = sampleManifest()
        var bytes = manifest.encoded()
        // The body size field (the header's last u64) claims 1 GiB.
        let claim = UInt64(1 << 30)
        for index in 0..<8 { bytes[120 + index] = UInt8(truncatingIfNeeded: claim >> (8 * UInt64(index))) }
        let error = #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        #expect(error?.message.contains("-fold") == true, "\(String(describing: error))")

        manifest.entries = (0..<20_000).map { index in
            RemoteEntry(
                path: "pages/\(String(format: "%06d", index)).json", kind: .regular, permissions: 0o644, size: 0,
                modificationTime: 1_700_000_000_000_000_000, contentHash: ContentHash.empty, linkTarget: nil, blobs: [])
        }
        manifest.entries.insert(
            RemoteEntry(path: "pages", kind: .directory, permissions: 0o755, size: 0, modificationTime: 0, contentHash: ContentHash(high: 0, low: 0), linkTarget: nil, blobs: []),
            at: 0)
        manifest.rootHash = manifest.snapshot().rootHash
        bytes = manifest.encoded()
        let header = try VersionManifest.decodeHeader(Array(bytes.prefix(128)), id: SHA256Digest.of(bytes))
        #expect(header.bodySize <= header.compressedSize * VersionManifest.maximumInflation)
        #expect(try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)).entries.count == 20_001)
    }

    /// A link's hash is how the root commits to its target (found by the remote fuzzer: a
    /// version whose link hash named another target decoded, and DEST then held a tree its
    /// root did not describe).
    @Test func aLinkMustHashToItsTarget() throws {
        var manifest = sampleManifest()
        manifest.entries[2].linkTarget = "g"
        manifest.rootHash = manifest.snapshot().rootHash
        let bytes = manifest.encoded()
        let error = #expect(throws: RemoteError.self) { try VersionManifest.decodedBothWays(bytes, id: SHA256Digest.of(bytes)) }
        #expect(error?.message.contains("does not hash to its target") == true, "\(String(describing: error))")
    }

    @Test func headRecordsFollowTheirParents() throws {
        let location = RemoteLocation(bucket: "b", prefix: "p")
        func summary(_ sequence: Int, parent: SHA256Digest?) -> VersionSummary {
            VersionSummary(id: SHA256Digest.of([UInt8(sequence)]), sequence: sequence, time: Int64(sequence), parent: parent, rootHash: ContentHash.empty, size: 1, entryCount: 1)
        }
        let first = summary(1, parent: nil)
        let second = summary(2, parent: first.id)
        let record = HeadRecord(head: first, history: []).advanced(to: second)
        #expect(try HeadRecord.decode(record.encoded(), location: location) == record)
        let broken = HeadRecord(head: second, history: [summary(1, parent: nil), summary(1, parent: nil)])
        #expect(throws: RemoteError.self) { try HeadRecord.decode(broken.encoded(), location: location) }
        #expect(try HeadRecord.decode(Array("ref: refs/heads/main\n".utf8), location: location) == nil)
        #expect(try HeadRecord.decode(Array("{\"format\": \"other\"}".utf8), location: location) == nil)
    }

    @Test func packsIndexTheirBlobs() {
        let blobs: [(digest: SHA256Digest, length: UInt32)] = [(SHA256Digest.of([1]), 3), (SHA256Digest.of([2]), 5)]
        let pack = [UInt8](repeating: 7, count: 8) + PackFormat.trailer(blobs)
        let index = pack.withUnsafeBytes { PackFormat.index(of: $0) }
        #expect(index?.map(\.offset) == [0, 3])
        #expect(index?.map(\.length) == [3, 5])
        #expect(index?.map(\.digest) == blobs.map(\.digest))
        #expect([UInt8](repeating: 0, count: 40).withUnsafeBytes { PackFormat.index(of: $0) } == nil)
    }

    @Test func pullRangesMergeNeighboursOnly() {
        let pack = SHA256Digest.of([1])
        // One wanted file a blob; each need points at its file's only blob.
        let places: [(offset: UInt32, length: UInt32)] = [(0, 100), (100, 100), (1 << 20, 100), (300, 50)]
        let entries = places.map { place in
            let location = BlobLocation(
                digest: SHA256Digest.of(Array("\(place.offset)".utf8)), pack: pack, offset: place.offset, length: place.length)
            return RemoteEntry(
                path: "f\(place.offset)", kind: .regular, permissions: 0o644, size: Int64(place.length), modificationTime: 0,
                contentHash: ContentHash(high: 0, low: UInt64(place.offset)), linkTarget: nil, blobs: [location][...])
        }
        let wanted = WantedFiles(entries, current: nil, wholeFileLimit: 1 << 20)
        let needs = wanted.files.indices.map { BlobNeed(file: $0, blob: 0, into: .blobFile) }
        let ranges = PullOperation.plan(needs, wanted: wanted)
        #expect(ranges.count == 2)
        let merged = ranges.first { $0.start == 0 }
        #expect(merged?.end == 350)
        #expect(merged?.blobs.count == 3)
    }

    @Test func stagedContentNamesGiveTheirKeyBack() {
        let key = FileKey(ContentHash.of(Array("staged".utf8)), 4096)
        let name = PullStaging.name(key)
        #expect(PullStaging.key(named: name) == key)
        // Only that very name: what else lies in the staging area is no content of ours.
        let hash = "\(key.hash)"
        for other in [hash + "-04096", hash + "-+4096", hash.uppercased() + "-4096", hash + "-4096.part", hash, "-4096", hash + "--1"] {
            #expect(PullStaging.key(named: other) == nil, "\(other)")
        }
    }

    @Test func pendingPacksSurviveATornRecord() throws {
        let directory = try TemporaryDirectory("pending")
        let cache = LocalCache(root: directory.path, endpoint: "http://x", location: RemoteLocation(bucket: "b", prefix: "p"))
        let first = LocalCache.PendingPack(id: SHA256Digest.of([1]), blobs: [(SHA256Digest.of([2]), 0, 10)])
        let second = LocalCache.PendingPack(id: SHA256Digest.of([3]), blobs: [(SHA256Digest.of([4]), 0, 20), (SHA256Digest.of([5]), 20, 5)])
        try cache.appendPending(first)
        try cache.appendPending(second)
        #expect(cache.pendingPacks().map(\.id) == [first.id, second.id])
        // A record cut short by a crash ends the list; the ones before it stay.
        let file = try FileDescriptor.open(cache.directory + "/pending", access: .writeOnly, options: [.append])
        try [UInt8](LocalCache.encoded(first).prefix(30)).withUnsafeBytes { try file.write($0) }
        #expect(cache.pendingPacks().map(\.id) == [first.id, second.id])
        cache.dropPending(named: [first.id])
        #expect(cache.pendingPacks().map(\.id) == [second.id])
    }

    @Test func pendingPacksOfAnEarlierFormatReadAsNoneAndAreCutOff() throws {
        let directory = try TemporaryDirectory("pending-old")
        let cache = LocalCache(root: directory.path, endpoint: "http://x", location: RemoteLocation(bucket: "b", prefix: "p"))
        // A record as the format before ChecksummedLog wrote it: marker, id, no blobs, SHA-256 prefix.
        var old = ByteWriter()
        old.append(UInt32(0x504B_5250))
        old.append(contentsOf: SHA256Digest.of([1]).bytes)
        old.append(UInt32(0))
        old.append(contentsOf: SHA256Digest.of(old.bytes).bytes.prefix(8))
        try FileSystem.makeDirectories(cache.directory, permissions: 0o700)
        try Files.write(cache.directory + "/pending", old.bytes)
        #expect(cache.pendingPacks().isEmpty)
        let pack = LocalCache.PendingPack(id: SHA256Digest.of([3]), blobs: [(SHA256Digest.of([4]), 0, 20)])
        try cache.appendPending(pack)
        #expect(cache.pendingPacks().isEmpty, "behind the foreign record")
        // The end of the next push cuts what it cannot read: what is appended after is read.
        cache.dropPending(named: [])
        try cache.appendPending(pack)
        #expect(cache.pendingPacks().map(\.id) == [pack.id])
        #expect(cache.pendingPacks().first?.blobs.map(\.length) == [20])
    }

    @Test func aPullJournalResumesAndReadsAnEarlierFormatOrATornTailAsNothingMore() throws {
        let directory = try TemporaryDirectory("pull-journal")
        let destination = directory.url("dest")
        let journalPath = PullStaging.path(of: destination) + "/journal"
        try FileSystem.makeDirectory(PullStaging.path(of: destination), permissions: 0o700)
        // Two records as the format before ChecksummedLog wrote them ("PKUL", a 32-bit check).
        var old = ByteWriter()
        for _ in 0..<2 {
            old.append(UInt32(0x4C55_504B))
            old.append(contentsOf: [UInt8](repeating: 7, count: 16 + 8 + 8 + 32))
            old.append(UInt32(0))
        }
        try Files.write(journalPath, old.bytes)
        let first = PullStaging.JournalRecord(content: FileKey(ContentHash.of([1]), 100), offset: 50, digest: SHA256Digest.of([2]))
        let second = PullStaging.JournalRecord(content: FileKey(ContentHash.of([1]), 100), offset: 0, digest: SHA256Digest.of([3]))
        do {
            let staging = try PullStaging(destination: destination)
            #expect(staging.done.isEmpty)
            staging.recordDone(first)
            staging.unlock()
        }
        do {
            let resumed = try PullStaging(destination: destination)
            #expect(resumed.done == [first])
            resumed.unlock()
        }
        // A record torn by a crash: the one before it stands, and the next pull's are read.
        let file = try FileDescriptor.open(journalPath, access: .writeOnly, options: [.append])
        try [UInt8](PullStaging.journalRecord(second).prefix(40)).withUnsafeBytes { try file.write($0) }
        do {
            let resumed = try PullStaging(destination: destination)
            #expect(resumed.done == [first])
            resumed.recordDone(second)
            resumed.unlock()
        }
        let last = try PullStaging(destination: destination)
        #expect(last.done == [first, second])
        last.unlock()
        last.remove()
    }

    @Test func aStreamedContentChecksItsStagedBlobs() throws {
        let directory = try TemporaryDirectory("stream")
        let old = SeededBytes(seed: 8).bytesArray(3000)
        let new = SeededBytes(seed: 9).bytesArray(1000)
        try Files.write(directory.url("old"), old)
        try Files.write(directory.url("blob"), new)
        let stream = StagedContentStream(parts: [
            .local(path: directory.url("old"), offset: 0, length: 1000),
            .blob(path: directory.url("blob"), digest: SHA256Digest.of(new), length: 1000),
            .local(path: directory.url("old"), offset: 2000, length: 1000),
        ])
        var bytes: [UInt8] = []
        try stream.forEachPiece { bytes.append(contentsOf: $0) }
        #expect(bytes == Array(old[0..<1000]) + new + Array(old[2000..<3000]))
        // A staged blob damaged since its download: refused, and removed for the next pull.
        try Files.write(directory.url("blob"), new.map { $0 ^ 1 })
        #expect {
            try stream.forEachPiece { _ in }
        } throws: { error in (error as? RemoteError)?.kind == .verificationFailed }
        #expect(try FileSystem.statusIfExists(directory.url("blob")) == nil)
    }
}
