import PackageCore

/// A blob a pull needs, and every place its bytes go.
struct BlobNeed: Sendable {
    /// Where a blob's bytes go: into a content assembled in the staging area, at an offset,
    /// or into a file of its own (`blobs/<sha256>`), for a content streamed to the engine.
    enum Destination: Sendable {
        case content(FileKey, offset: Int64)
        case blobFile
    }

    var location: BlobLocation
    /// The first destination, inline: most blobs have one, and a pull of many small files
    /// plans one need per file.
    private var first: Destination
    private var others: [Destination] = []

    init(location: BlobLocation, destination: Destination) {
        self.location = location
        self.first = destination
    }

    /// Every destination, the first one first.
    var destinations: [Destination] { [first] + others }

    /// Adds the destinations of `other`, a need of the same blob; one blob file is enough.
    mutating func merge(_ other: BlobNeed) {
        for destination in other.destinations {
            if case .blobFile = destination, destinations.contains(where: { if case .blobFile = $0 { true } else { false } }) {
                continue
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
    private var index: Int
    private var open: [SharedDescriptor] = []
    private(set) var received: Int64 = 0
    private(set) var failure: (any Error)?
    let location: RemoteLocation

    init(range: PackRange, staging: PullStaging, location: RemoteLocation, onBlob: @escaping (Int64) -> Void) {
        self.range = range
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
                let blob = range.blobs[index]
                let blobStart = Int64(blob.location.offset)
                if position < blobStart {
                    let skip = Int(min(blobStart - position, Int64(bytes.count - cursor)))
                    received += Int64(skip)
                    cursor += skip
                    continue
                }
                let within = position - blobStart
                if within == 0 { try openDestinations(blob) }
                let take = Int(min(Int64(blob.location.length) - within, Int64(bytes.count - cursor)))
                let piece = UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + take)])
                hasher.update(piece)
                for (file, destination) in zip(open, blob.destinations) {
                    switch destination {
                    case .content(_, let offset): try file.descriptor.write(piece, at: offset + within)
                    case .blobFile: try file.descriptor.write(piece, at: within)
                    }
                }
                received += Int64(take)
                cursor += take
                if within + Int64(take) == Int64(blob.location.length) { try finishBlob(blob) }
            }
            return true
        } catch {
            failure = error
            return false
        }
    }

    private func openDestinations(_ blob: BlobNeed) throws {
        open.removeAll()
        hasher.reset()
        for destination in blob.destinations {
            switch destination {
            case .content(let key, _): open.append(SharedDescriptor(try staging.openPartial(key)))
            case .blobFile: open.append(SharedDescriptor(try staging.openBlobPart(blob.location.digest)))
            }
        }
    }

    private func finishBlob(_ blob: BlobNeed) throws {
        open.removeAll()
        let digest = hasher.finish()
        hasher.reset()
        guard digest == blob.location.digest else {
            throw RemoteError(
                .verificationFailed,
                "object \(RemoteLayout.pack(blob.location.pack, location)) is damaged: the blob at offset "
                    + "\(blob.location.offset) does not match its SHA-256 \(blob.location.digest.description.prefix(12)); "
                    + "DEST was not changed")
        }
        for destination in blob.destinations {
            switch destination {
            case .content(let key, let offset):
                staging.recordDone(PullStaging.JournalRecord(content: key, offset: offset, digest: digest))
            case .blobFile:
                try staging.commitBlob(digest)
            }
        }
        index += 1
        onBlob(Int64(blob.location.length))
    }
}
