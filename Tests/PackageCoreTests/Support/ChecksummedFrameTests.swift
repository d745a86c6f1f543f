import Foundation
import PackageTestSupport
import Testing
@testable import PackageCore

/// The one record format for state that survives a crash: a frame round-trips and refuses
/// every damage; a log of frames yields the whole records before a torn or foreign one,
/// and concurrent appenders add whole records.
@Suite("Checksummed records")
struct ChecksummedFrameTests {
    static let magic: [UInt8] = Array("PKGTEST".utf8) + [0]

    static func frame(_ payload: [UInt8], version: UInt32 = 3) -> [UInt8] {
        ChecksummedFrame.encode(magic: magic, version: version) { $0.append(contentsOf: payload) }
    }

    static func open(_ bytes: [UInt8], highestVersion: UInt32 = 3, minimumPayload: Int = 0) throws(ChecksummedFrame.Refusal)
        -> (version: UInt32, payload: [UInt8], checksum: ContentHash)
    {
        let opened = bytes.withUnsafeBytes { raw in
            Result { () throws(ChecksummedFrame.Refusal) in
                let frame = try ChecksummedFrame.open(
                    raw, magic: magic, highestVersion: highestVersion, minimumPayload: minimumPayload)
                return (frame.version, Array(frame.payload), frame.checksum)
            }
        }
        return try opened.get()
    }

    static func bytes(seed: UInt64, _ count: Int) -> [UInt8] {
        var generator = SeededBytes(seed: seed)
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { generator.fill($0) }
        return bytes
    }

    @Test("a frame is magic, version, payload and the XXH3-128 of all before it, and opens to its payload")
    func roundTrip() throws {
        let payload = Self.bytes(seed: 1, 300)
        let bytes = Self.frame(payload)
        #expect(Array(bytes.prefix(8)) == Self.magic)
        #expect(Array(bytes[8..<12]) == [3, 0, 0, 0])
        #expect(Array(bytes[12..<312]) == payload)
        #expect(Array(bytes.suffix(16)) == ContentHash.of(bytes.dropLast(16)).canonicalBytes)
        let opened = try Self.open(bytes)
        #expect(opened.version == 3 && opened.payload == payload)
        #expect(opened.checksum == ContentHash.of(bytes.dropLast(16)))
        // An older version opens too (the caller decides what it reads); an empty payload is a frame.
        #expect(try Self.open(Self.frame(payload, version: 1)).version == 1)
        #expect(try Self.open(Self.frame([])).payload == [])
    }

    @Test("a frame written in pieces is the frame written whole")
    func pieces() throws {
        let payload = Self.bytes(seed: 2, 10_000)
        var frame = ChecksummedFrame.Writer(magic: Self.magic, version: 3)
        var streamed: [UInt8] = []
        for start in stride(from: 0, to: payload.count, by: 3_001) {
            frame.writer.append(contentsOf: payload[start..<min(start + 3_001, payload.count)])
            frame.flush { streamed.append(contentsOf: $0) }
        }
        let checksum = frame.finish()
        streamed.append(contentsOf: frame.writer.bytes)
        #expect(streamed == Self.frame(payload))
        #expect(try Self.open(streamed).checksum == checksum)
    }

    @Test("every single-byte change and every truncation of a frame is refused, each with its reason")
    func everyDamageRefused() {
        let bytes = Self.frame(Self.bytes(seed: 3, 40))
        for index in bytes.indices {
            for flip: UInt8 in [0x01, 0x80] {
                var damaged = bytes
                damaged[index] ^= flip
                #expect(throws: ChecksummedFrame.Refusal.self, "byte \(index)") { try Self.open(damaged) }
            }
        }
        for length in 0..<bytes.count {
            #expect(throws: ChecksummedFrame.Refusal.self, "\(length) bytes") { try Self.open(Array(bytes.prefix(length))) }
        }
        #expect(throws: ChecksummedFrame.Refusal.checksumMismatch) { try Self.open(bytes + [0]) }
        #expect(throws: ChecksummedFrame.Refusal.truncated) { try Self.open(Array(bytes.prefix(11))) }
        var foreign = bytes
        foreign[0] = UInt8(ascii: "X")
        #expect(throws: ChecksummedFrame.Refusal.badMagic) { try Self.open(foreign) }
        #expect(throws: ChecksummedFrame.Refusal.futureVersion(4)) { try Self.open(Self.frame([1], version: 4)) }
        #expect(throws: ChecksummedFrame.Refusal.checksumMismatch) { try Self.open(Array(bytes.dropLast(1))) }
        // Shorter than the payload the caller requires: truncated, before the checksum is looked at.
        #expect(throws: ChecksummedFrame.Refusal.truncated) { try Self.open(Array(bytes.dropLast(1)), minimumPayload: 40) }
        #expect(throws: Never.self) { try Self.open(bytes, minimumPayload: 40) }
    }

    @Test("the save journal's and a manifest delta's bytes are what their hand-written framing wrote")
    func formatsUnchanged() throws {
        // The journal, framed as SaveJournal.encoded framed it before the codec.
        let journal = SaveJournal(
            binding: SaveJournal.Binding(root: 7, temporaryDirectory: 9),
            operations: [
                .remove(path: "old", kind: .directory), .makeDirectory(path: "new", permissions: 0o700),
                .rename(temporary: "n1", path: "new/a"), .setPermissions(path: "new", permissions: 0o555),
                .patch(path: "big", data: "n2", inode: 5, size: 100, permissions: 0o644, modificationTime: 42, ranges: [0..<10]),
            ])
        let encoded = journal.encoded()
        var old = ByteWriter()
        old.append(contentsOf: Array("PKGJRNL".utf8) + [0])
        old.append(UInt32(2))
        old.append(contentsOf: encoded[12..<(encoded.count - 16)])
        old.append(old.bytes.withUnsafeBytes { ContentHash.of($0) })
        #expect(encoded == old.bytes)
        #expect(try SaveJournal.decode(encoded, expected: journal.binding).get() == journal)

        // A delta, header field by field as ManifestFormat.encodeDelta wrote it before.
        let entry = SnapshotEntry(
            path: "a.txt", kind: .regular, permissions: 0o644, size: 3, hash: ContentHash.of(Array("abc".utf8)))
        let header = ManifestFormat.DeltaHeader(
            sequence: 4, baseChecksum: ContentHash.of([1]), previousChecksum: ContentHash.of([2]),
            rootHash: ContentHash.of([3]), relinkWindow: 10...20, entryCount: 6, packageIdentity: 77)
        let delta = ManifestFormat.encodeDelta(header: header, upserts: [entry], removals: ["gone"])
        var expected = ByteWriter()
        expected.append(contentsOf: Array("PKGDLT".utf8) + [0, 0])
        expected.append(UInt32(2))
        expected.append(UInt32(0))
        expected.append(UInt64(4))
        for hash in [header.baseChecksum, header.previousChecksum, header.rootHash] { expected.append(hash) }
        expected.append(Int64(10))
        expected.append(Int64(20))
        expected.append(UInt64(2))
        expected.append(UInt64(6))
        expected.append(UInt64(77))
        expected.append(UInt8(2))
        var previous: [UInt8] = []
        ManifestFormat.appendPath("gone", previous: &previous, to: &expected)
        expected.append(UInt8(1))
        previous = []
        ManifestFormat.appendEntry(entry, previous: &previous, to: &expected)
        expected.append(expected.bytes.withUnsafeBytes { ContentHash.of($0) })
        #expect(delta == expected.bytes)
        let decoded = try delta.withUnsafeBytes { try ManifestFormat.decodeDelta($0, path: "delta") }
        #expect(decoded.removals == ["gone"] && decoded.upserts.map(\.path) == ["a.txt"])
        #expect(decoded.checksum == ContentHash.of(delta.dropLast(16)))
    }

    // MARK: Logs

    static func record(_ payload: [UInt8], magic: [UInt8] = magic, version: UInt32 = 1) -> [UInt8] {
        ChecksummedLog.record(magic: magic, version: version, payload: payload)
    }

    /// The payloads `forEachRecord` accepts, and the length they take.
    static func payloads(_ bytes: [UInt8]) -> (payloads: [[UInt8]], length: Int) {
        var payloads: [[UInt8]] = []
        let length = bytes.withUnsafeBytes { raw in
            ChecksummedLog.forEachRecord(in: raw, magic: magic, highestVersion: 1) { _, payload in
                payloads.append(Array(payload))
                return true
            }
        }
        return (payloads, length)
    }

    @Test("a log cut anywhere yields the whole records before the cut")
    func tornLog() {
        let payloads = [Self.bytes(seed: 4, 50), [], Self.bytes(seed: 5, 7)]
        let records = payloads.map { Self.record($0) }
        let log = records.flatMap { $0 }
        #expect(Self.payloads(log).payloads == payloads)
        #expect(Self.payloads(log).length == log.count)
        var ends = [0]
        for record in records { ends.append(ends.last! + record.count) }
        for cut in 0...log.count {
            let whole = ends.lastIndex(where: { $0 <= cut })!
            let read = Self.payloads(Array(log.prefix(cut)))
            #expect(read.payloads == Array(payloads.prefix(whole)), "cut at \(cut)")
            #expect(read.length == ends[whole], "cut at \(cut)")
        }
    }

    @Test("a damaged, foreign or newer record ends the log, and a claimed length is never trusted")
    func damagedLog() {
        let first = Self.record([1, 2, 3])
        let second = Self.record([4, 5, 6])
        for index in second.indices {
            var damaged = second
            damaged[index] ^= 0x10
            #expect(Self.payloads(first + damaged + first).payloads == [[1, 2, 3]], "byte \(index)")
        }
        let foreign = Self.record([9], magic: Array("PKGOTHR".utf8) + [0])
        #expect(Self.payloads(first + foreign + second).payloads == [[1, 2, 3]])
        #expect(Self.payloads(first + Self.record([9], version: 2) + second).payloads == [[1, 2, 3]])
        // A length of 4 GiB claimed by a record of a few bytes: the end of what arrived.
        var huge = second
        huge.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(Self.payloads(first + huge).length == first.count)
        // A payload its reader refuses ends the log there too.
        let refused = [first, second].flatMap { $0 }.withUnsafeBytes { raw in
            ChecksummedLog.forEachRecord(in: raw, magic: Self.magic, highestVersion: 1) { _, payload in payload.first == 1 }
        }
        #expect(refused == first.count)
    }

    @Test("two threads appending at once to one log leave only whole records, all of them")
    func concurrentAppenders() throws {
        let directory = try TemporaryDirectory("log-append")
        let path = directory.url("log")
        let perThread = 200
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            let file = try! FileDescriptor.open(path, access: .writeOnly, options: [.create, .append], permissions: 0o600)
            for index in 0..<perThread {
                // Large records (several pages) and small ones, so a torn interleaving would show.
                let payload = [UInt8](repeating: UInt8(thread), count: index % 2 == 0 ? 9_000 : 5) + [UInt8(index % 256)]
                try! ChecksummedLog.append(Self.record(payload), to: file)
            }
        }
        let file = try FileDescriptor.open(path)
        var counts = [0, 0]
        let read = try ChecksummedLog.readRecords(of: file, magic: Self.magic, highestVersion: 1, limit: 1 << 30) { _, payload in
            guard let owner = payload.first, owner < 2, payload.dropLast().allSatisfy({ $0 == owner }) else { return false }
            counts[Int(owner)] += 1
            return true
        }
        #expect(counts == [perThread, perThread])
        #expect(read.accepted == read.size)
    }

    @Test("reading a log file goes as far as its real size and limit, and reports a bad tail")
    func logFile() throws {
        let directory = try TemporaryDirectory("log-file")
        let path = directory.url("log")
        let first = Self.record([1])
        try Files.write(path, first + first + Array(first.prefix(10)))
        let file = try FileDescriptor.open(path, access: .readWrite)
        var count = 0
        let read = try ChecksummedLog.readRecords(of: file, magic: Self.magic, highestVersion: 1, limit: 1 << 20) { _, _ in
            count += 1
            return true
        }
        #expect(count == 2 && read.accepted == Int64(2 * first.count) && read.size == Int64(2 * first.count + 10))
        // Within a limit that cuts the second record: the first only.
        count = 0
        let limited = try ChecksummedLog.readRecords(
            of: file, magic: Self.magic, highestVersion: 1, limit: first.count + 5
        ) { _, _ in
            count += 1
            return true
        }
        #expect(count == 1 && limited.accepted == Int64(first.count))
    }
}
