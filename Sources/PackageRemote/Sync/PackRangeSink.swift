import PackageCore

/// A blob a pull needs, and the first place its bytes go (the others, when several
/// contents share the blob, are in `PackRange.extra`).
///
/// Held as positions into the wanted files (16 bytes, not the blob's 48-byte location):
/// a fresh pull of a million small files plans a million of these.
struct BlobNeed: Sendable {
    /// Where a blob's bytes go: into a content assembled in the staging area, at an offset;
    /// into the ready file of a content that is this one blob; or into a file of its own
    /// (`blobs/<sha256>`), for a content streamed to the engine.
    enum Destination: Sendable {
        case content(FileKey, offset: Int64)
        case readyFile(FileKey)
        case blobFile
    }

    /// The wanted file whose blob list names the blob (its position in `WantedFiles.files`),
    /// and the blob's place in that list.
    private let file: Int32
    private let blob: Int32
    /// The first destination: the offset in that file's content, -1 for a blob file, -2 for
    /// that file's ready file.
    private let offset: Int64

    /// The blob at `blob` in the list of the wanted file at `file`, going to `destination`,
    /// which is a blob file or a place in that file's own content.
    init(file: Int, blob: Int, into destination: Destination) {
        self.file = Int32(file)
        self.blob = Int32(blob)
        switch destination {
        case .content(_, let offset): self.offset = offset
        case .readyFile: self.offset = -2
        case .blobFile: self.offset = -1
        }
    }

    /// Where the blob is in the store.
    func location(in wanted: WantedFiles) -> BlobLocation {
        wanted.blobs[Int(wanted.files[Int(file)].firstBlob) + Int(blob)]
    }

    /// The wanted file that names the blob, when the blob's first destination is that
    /// file's ready file: whose permissions and date the ready file takes.
    func readyFile(in wanted: WantedFiles) -> WantedFiles.File? {
        offset == -2 ? wanted.files[Int(file)] : nil
    }

    /// Where the blob's bytes go.
    func destination(in wanted: WantedFiles) -> Destination {
        guard offset != -1 else { return .blobFile }
        let key = wanted.files[Int(file)].key
        return offset == -2 ? .readyFile(key) : .content(key, offset: offset)
    }
}

extension BlobNeed.Destination {
    var isBlobFile: Bool { if case .blobFile = self { true } else { false } }
}

/// One ranged GET of a pack: the blobs it covers, in pack order.
struct PackRange: Sendable {
    var pack: SHA256Digest
    var start: Int64
    var end: Int64
    /// A slice of the one array of a pull's needs, in pack order: ranges share its storage.
    var blobs: ArraySlice<BlobNeed>
    /// The further places of blobs several contents share, by digest (the same table in
    /// every range of a pull; nearly always empty).
    var extra: [SHA256Digest: [BlobNeed.Destination]] = [:]
}

/// Streams a pack range into the staging area: each blob's bytes are hashed as they
/// arrive and written to every file that needs them; at a blob's last byte its SHA-256 must
/// be its name, or the transfer aborts (the pull then refuses, DEST untouched).
///
/// A content of one blob is written straight to its ready file, its XXH3 computed on the
/// way in and checked with the SHA-256, and takes its file's permissions and date there (so
/// the engine only moves it into place); such files are counted in `readied`. A content
/// of several blobs is assembled in its partial file, each blob written
/// recorded in the journal.
///
/// Resumable: a GET that broke off is retried from the first byte not yet received, the
/// running hashes of the blob in progress carrying on.
final class PackRangeSink: ResumableSink {
    private let range: PackRange
    private let staging: PullStaging
    private let onBlob: (Int64) -> Void
    private let hasher = SHA256Hasher()
    /// The XXH3 of the blob in progress, fed when it is a whole content.
    private let contentHasher = ContentHasher()
    /// The files the needs point into.
    private let wanted: WantedFiles
    private var index: Int
    private var open: [SharedDescriptor] = []
    /// Where the blob being received goes (`open` in the same order).
    private var destinations: [BlobNeed.Destination] = []
    /// Whether the blob in progress is a whole content of one of its destinations.
    private var fillsContent = false
    /// The ready files this range wrote and checked.
    private(set) var readied = 0
    private(set) var received: Int64 = 0
    private(set) var failure: (any Error)?
    let location: RemoteLocation

    init(
        range: PackRange, wanted: WantedFiles, staging: PullStaging, location: RemoteLocation,
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
                if fillsContent { contentHasher.update(piece) }
                for (file, destination) in zip(open, destinations) {
                    switch destination {
                    case .content(_, let offset): try file.descriptor.write(piece, at: offset + within)
                    case .readyFile, .blobFile: try file.descriptor.write(piece, at: within)
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
        contentHasher.reset()
        destinations = [range.blobs[index].destination(in: wanted)] + (range.extra[blob.digest] ?? [])
        fillsContent = false
        for destination in destinations {
            switch destination {
            case .readyFile(let key):
                fillsContent = true
                open.append(SharedDescriptor(try staging.openReadyForWriting(key)))
            case .content(let key, _): open.append(SharedDescriptor(try staging.openPartial(key)))
            case .blobFile: open.append(SharedDescriptor(try staging.openBlobPart(blob.digest)))
            }
        }
    }

    private func finishBlob(_ blob: BlobLocation) throws {
        let digest = hasher.finish()
        hasher.reset()
        guard digest == blob.digest else {
            open.removeAll()
            removeReadyFiles()
            throw RemoteError(
                .verificationFailed,
                "object \(RemoteLayout.pack(blob.pack, location)) is damaged: the blob at offset "
                    + "\(blob.offset) does not match its SHA-256 \(blob.digest.description.prefix(12)); "
                    + "DEST was not changed")
        }
        let firstFile = range.blobs[index].readyFile(in: wanted)
        for (place, (file, destination)) in zip(open, destinations).enumerated() {
            switch destination {
            case .readyFile(let key):
                try finishReadyFile(key, file: file.descriptor, wanted: place == 0 ? firstFile : nil)
            case .content(let key, let offset):
                staging.recordDone(PullStaging.JournalRecord(content: key, offset: offset, digest: digest))
            case .blobFile:
                try staging.commitBlob(digest)
            }
        }
        open.removeAll()
        index += 1
        onBlob(Int64(blob.length))
    }

    /// A ready file whose bytes all arrived: checked against its content hash (a version
    /// may name bytes of another content: refused, and removed), given its wanted file's
    /// permissions (readable and writable by its owner while staged) and date, and counted.
    private func finishReadyFile(_ key: FileKey, file: borrowing FileDescriptor, wanted: WantedFiles.File?) throws {
        guard contentHasher.digest() == key.hash else {
            staging.removeReady(key)
            throw RemoteError(
                .verificationFailed,
                "assembled content \(key.hash) does not match its content hash (a blob held other bytes than the version says); DEST was not changed")
        }
        if let wanted {
            if wanted.permissions | 0o600 != 0o600 { try file.setPermissions(wanted.permissions | 0o600) }
            try file.setModificationTime(wanted.modificationTime)
        }
        readied += 1
    }

    /// Removes the ready files a refused blob was being written to.
    private func removeReadyFiles() {
        for case .readyFile(let key) in destinations { staging.removeReady(key) }
    }
}
