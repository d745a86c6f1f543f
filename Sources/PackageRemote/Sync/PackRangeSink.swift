import PackageCore

/// A blob a pull needs, and every place its bytes go.
///
/// Held as positions into the wanted entries (24 bytes, not the blob's 72-byte location):
/// a fresh pull of a million small files plans a million of these.
struct BlobNeed: Sendable {
    /// Where a blob's bytes go: into a content assembled in the staging area, at an offset,
    /// or into a file of its own (`blobs/<sha256>`), for a content streamed to the engine.
    enum Destination: Sendable {
        case content(FileKey, offset: Int64)
        case blobFile
    }

    /// The wanted entry whose blob list names the blob (the first entry of its content),
    /// and the blob's place in that list.
    private let entry: Int32
    private let blob: Int32
    /// The first destination: the offset in that entry's content, or -1 for a blob file.
    private let offset: Int64
    /// Further destinations: a blob that several contents share.
    private var others: [Destination] = []

    /// The blob at `blob` in the list of `wanted[entry]`, going to `destination`, which
    /// is a blob file or a place in that entry's own content.
    init(entry: Int, blob: Int, into destination: Destination) {
        self.entry = Int32(entry)
        self.blob = Int32(blob)
        switch destination {
        case .content(_, let offset): self.offset = offset
        case .blobFile: self.offset = -1
        }
    }

    /// Where the blob is in the store.
    func location(in wanted: [RemoteEntry]) -> BlobLocation {
        let blobs = wanted[Int(entry)].blobs
        return blobs[blobs.startIndex + Int(blob)]
    }

    /// Every destination, the first one first.
    func destinations(in wanted: [RemoteEntry]) -> [Destination] {
        guard offset >= 0 else { return [.blobFile] + others }
        let named = wanted[Int(entry)]
        return [.content(FileKey(named.contentHash, named.size), offset: offset)] + others
    }

    /// Adds the destinations of `other`, a need of the same blob; one blob file is enough.
    mutating func merge(_ other: BlobNeed, wanted: [RemoteEntry]) {
        var hasBlobFile = destinations(in: wanted).contains { if case .blobFile = $0 { true } else { false } }
        for destination in other.destinations(in: wanted) {
            if case .blobFile = destination {
                if hasBlobFile { continue }
                hasBlobFile = true
            }
            others.append(destination)
        }
    }
}

/// One ranged GET of a pack: the blobs it covers, in pack order.
struct PackRange: Sendable {
    var pack: SHA256Digest
    var start: Int64
    var end: Int64
    /// A slice of the one array of a pull's needs, in pack order: ranges share its storage.
    var blobs: ArraySlice<BlobNeed>
}

/// Streams a pack range into the staging area: each blob's bytes are hashed as they
/// arrive and written to every partial file that needs them; at a blob's last byte its
/// SHA-256 must be its name, or the transfer aborts (the pull then refuses, DEST untouched).
///
/// Resumable: a GET that broke off is retried from the first byte not yet received, the
/// running hash of the blob in progress carrying on.
final class PackRangeSink: ResumableSink {
    private let range: PackRange
    private let staging: PullStaging
    private let onBlob: (Int64) -> Void
    private let hasher = SHA256Hasher()
    /// The entries the needs point into.
    private let wanted: [RemoteEntry]
    private var index: Int
    private var open: [SharedDescriptor] = []
    /// Where the blob being received goes (`open` in the same order).
    private var destinations: [BlobNeed.Destination] = []
    private(set) var received: Int64 = 0
    private(set) var failure: (any Error)?
    let location: RemoteLocation

    init(
        range: PackRange, wanted: [RemoteEntry], staging: PullStaging, location: RemoteLocation,
        onBlob: @escaping (Int64) -> Void
    ) {
        self.range = range
        self.wanted = wanted
        self.staging = staging
        self.location = location
        self.onBlob = onBlob
        self.index = range.blobs.startIndex
    }

    var isComplete: Bool { index == range.blobs.endIndex }

    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var cursor = 0
        do {
            while cursor < bytes.count {
                guard index < range.blobs.endIndex else { return true }  // nothing more is needed
                let position = range.start + received
                let blob = range.blobs[index].location(in: wanted)
                let blobStart = Int64(blob.offset)
                if position < blobStart {
                    let skip = Int(min(blobStart - position, Int64(bytes.count - cursor)))
                    received += Int64(skip)
                    cursor += skip
                    continue
                }
                let within = position - blobStart
                if within == 0 { try openDestinations(blob) }
                let take = Int(min(Int64(blob.length) - within, Int64(bytes.count - cursor)))
                let piece = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + take)])
                hasher.update(piece)
                for (file, destination) in zip(open, destinations) {
                    switch destination {
                    case .content(_, let offset): try file.descriptor.write(piece, at: offset + within)
                    case .blobFile: try file.descriptor.write(piece, at: within)
                    }
                }
                received += Int64(take)
                cursor += take
                if within + Int64(take) == Int64(blob.length) { try finishBlob(blob) }
            }
            return true
        } catch {
            failure = error
            return false
        }
    }

    private func openDestinations(_ blob: BlobLocation) throws {
        open.removeAll()
        hasher.reset()
        destinations = range.blobs[index].destinations(in: wanted)
        for destination in destinations {
            switch destination {
            case .content(let key, _): open.append(SharedDescriptor(try staging.openPartial(key)))
            case .blobFile: open.append(SharedDescriptor(try staging.openBlobPart(blob.digest)))
            }
        }
    }

    private func finishBlob(_ blob: BlobLocation) throws {
        open.removeAll()
        let digest = hasher.finish()
        hasher.reset()
        guard digest == blob.digest else {
            throw RemoteError(
                .verificationFailed,
                "object \(RemoteLayout.pack(blob.pack, location)) is damaged: the blob at offset "
                    + "\(blob.offset) does not match its SHA-256 \(blob.digest.description.prefix(12)); "
                    + "DEST was not changed")
        }
        for destination in destinations {
            switch destination {
            case .content(let key, let offset):
                staging.recordDone(PullStaging.JournalRecord(content: key, offset: offset, digest: digest))
            case .blobFile:
                try staging.commitBlob(digest)
            }
        }
        index += 1
        onBlob(Int64(blob.length))
    }
}
