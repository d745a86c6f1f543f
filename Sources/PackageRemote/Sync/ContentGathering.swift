import PackageCore

/// One run of `PullOperation.gatherContents`, its phases as methods in the order they run:
/// where each needed content comes from, which blobs to fetch, then the checks that hand
/// every content to the save engine. The state the phases share is stored here, so each
/// phase says what it reads and what it sets.
struct ContentGathering {
    /// The contents DEST lacks at their paths, each once.
    let wanted: WantedFiles
    var wholeOnly: Set<FileKey> { wanted.wholeOnly }
    let destination: String
    var current: TreeSnapshot? { wanted.current }
    let staging: PullStaging
    let options: RemoteOptions
    let progress: ProgressManager?
    /// What DEST holds of them.
    let found: ContentsNeeded
    let buffer: ChunkBuffer
    /// Where each content is, handed to the save engine at the end.
    var contents: PulledContents
    /// Large contents partly changed: streams of DEST's pieces and staged blobs.
    var streamed: [FileKey: [StagedContentStream.Part]] = [:]
    /// Staged blobs the streams read, kept by the sweep of the staging area.
    var keepBlobs = Set<SHA256Digest>()
    /// Contents assembled in the staging area from fetched blobs (positions in `wanted.files`).
    var assembled: [Int32] = []
    /// Assembled contents of several blobs not yet ready (an interrupted pull may have
    /// finished some), positions in `wanted.files`.
    var pending: [Int32] = []
    /// Assembled contents of one blob to fetch: written to their ready files by the
    /// transfers, which count them.
    var wholeCount = 0
    /// The contents an interrupted pull left in the staging area, sorted: only these are
    /// looked for there (a fresh pull asks nothing of the file system per content).
    var stagedReady: [FileKey] = []
    var stagedPartial: [FileKey] = []
    /// Each large content's piece hashes (XXH3), known now for DEST's pieces and once
    /// fetched or assembled for the rest: its chunk list, which lets the engine write only
    /// the pieces that changed, and DEST's manifest record them for the next save. Small
    /// contents (one piece) need none.
    var pieceHashes: [FileKey: [ContentHash?]] = [:]

    /// Finds the contents needed and refuses, before anything is fetched, those that cannot
    /// fit on DEST's file system; sets the progress totals.
    init(
        _ wanted: WantedFiles, destination: String, staging: PullStaging, options: RemoteOptions,
        progress: ProgressManager?
    ) throws {
        self.wanted = wanted
        self.destination = destination
        self.staging = staging
        self.options = options
        self.progress = progress
        found = ContentsNeeded(wanted)
        do {
            try PullOperation.requireRoom(found.bytesAdded, destination: destination)
        } catch {
            // Whatever an earlier pull staged cannot be finished here either: its room comes back.
            staging.remove()
            throw error
        }
        buffer = ChunkBuffer(size: max(ChunkBuffer.defaultSize, Int(options.chunking.maximumPiece)))
        contents = PulledContents(readyDirectory: staging.readyDirectory, shared: wanted.shared)
        let totalBytes = wanted.files.reduce(Int64(0)) { $0 + $1.key.size }
        let files = wanted.files.count
        progress?.withProperties {
            $0.totalCount = BlobUploader.units(totalBytes) + files + 2
            $0.totalFileCount = files
        }
    }

    /// The blobs of the needed content at `position` in `wanted.files`.
    func blobs(at position: Int) -> ArraySlice<BlobLocation> {
        wanted.blobs(at: position)
    }

    /// Decides where each needed content comes from: DEST itself (moved or copied
    /// content), a stream of DEST's pieces and staged blobs (a large file partly changed),
    /// or the staging area, assembled from fetched blobs. Then sweeps from the staging area
    /// what an earlier pull left that none of these needs.
    mutating func chooseOrigins(result: inout PullResult) throws {
        // The pieces DEST already holds, where a large file changed in a few places.
        let localPieces = try PullOperation.indexLocalPieces(
            wanted.pieceSources, destination: destination, options: options, buffer: buffer)
        for (ordinal, file) in wanted.files.enumerated() {
            let key = file.key
            let blobs = blobs(at: ordinal)
            if let index = found.localByContent[key], let old = current?.entries[index] {
                contents.origins[key] = copyOrigin(old)
                result.contentsCopiedFromDestination += 1
                progress?.complete(count: BlobUploader.units(key.size))
            } else if !wholeOnly.contains(key), blobs.contains(where: { localPieces[$0.digest]?.length == Int($0.length) }) {
                stream(key, blobs: blobs, localPieces: localPieces, result: &result)
            } else {
                assembled.append(Int32(ordinal))
            }
        }
        // The assembled contents, by their positions in `wanted.files` (sorted by key).
        let (wanted, assembled) = (wanted, assembled)
        (stagedReady, stagedPartial) = staging.removeUnneeded(
            keepingContents: { key in wanted.position(of: key).map { assembled.containsSorted(Int32($0)) } ?? false },
            blobs: keepBlobs)
    }

    /// DEST's file `old` as the origin of its content at another path, with the stat data
    /// its scan saw (the engine checks the file still is what was scanned).
    func copyOrigin(_ old: SnapshotEntry) -> ContentOrigin {
        .file(
            path: PackageLayout.joined(destination, old.path),
            seen: FileStatus(
                kind: .regular, permissions: old.permissions, size: old.size, modificationTime: old.modificationTime,
                changeTime: old.changeTime, inode: old.inode, device: old.device))
    }

    /// Makes `key` a stream: DEST's pieces where it holds them, staged blobs for the rest;
    /// the hashes of DEST's pieces are known now.
    mutating func stream(
        _ key: FileKey, blobs: ArraySlice<BlobLocation>, localPieces: [SHA256Digest: PullOperation.LocalPiece],
        result: inout PullResult
    ) {
        streamed[key] = blobs.map { blob in
            if let local = localPieces[blob.digest], local.length == Int(blob.length) {
                result.blobsFromDestination += 1
                return .local(path: local.path, offset: local.offset, length: local.length)
            }
            keepBlobs.insert(blob.digest)
            return .blob(path: staging.blobPath(blob.digest), digest: blob.digest, length: Int(blob.length))
        }
        pieceHashes[key] = blobs.map { blob in
            localPieces[blob.digest].flatMap { $0.length == Int(blob.length) ? $0.hash : nil }
        }
    }

    /// Plans every blob to fetch (neither staged already nor written by an interrupted
    /// pull) into ranges of packs, and sets the byte total a progress line shows.
    mutating func planFetches(result: inout PullResult) throws -> [PackRange] {
        var needs: [BlobNeed] = []
        needs.reserveCapacity(assembled.count + streamed.count)  // a blob a small file
        streamedNeeds(into: &needs, result: &result)
        try assembledNeeds(into: &needs, result: &result)
        // The figures a progress line shows: the bytes of the blobs to download, known
        // before the first GET and never growing; each counts once it arrived and was
        // checked (the gaps a merged range carries do not count).
        let ranges = PullOperation.plan(consume needs, wanted: wanted)
        let downloadBytes = ranges.reduce(Int64(0)) { total, range in
            range.blobs.reduce(total) { $0 + Int64($1.location(in: wanted).length) }
        }
        progress?.withProperties {
            $0.totalByteCount = UInt64(downloadBytes)
            $0.completedByteCount = 0
        }
        return ranges
    }

    /// The streams' blobs to fetch, each into a blob file once.
    func streamedNeeds(into needs: inout [BlobNeed], result: inout PullResult) {
        var blobFiles = Set<SHA256Digest>()
        for (key, parts) in streamed {
            for case .blob(_, let digest, let length) in parts {
                if staging.hasBlob(digest, length: UInt32(length)) {
                    result.blobsResumed += 1
                } else if blobFiles.insert(digest).inserted {
                    let position = wanted.position(of: key)!
                    let list = wanted.blobs(at: position)
                    let blob = list.firstIndex { $0.digest == digest }! - list.startIndex
                    needs.append(BlobNeed(file: position, blob: blob, into: .blobFile))
                }
            }
            progress?.complete(count: 1)
        }
    }

    /// The assembled contents' blobs to fetch: a content of one blob into its ready file,
    /// the others each into its place in their partial file; contents an interrupted pull
    /// finished are taken as they are (once checked again).
    mutating func assembledNeeds(into needs: inout [BlobNeed], result: inout PullResult) throws {
        for ordinal in assembled {
            let key = wanted.files[Int(ordinal)].key
            let position = Int(ordinal)
            let blobs = wanted.blobs(at: position)
            if stagedReady.containsSorted(key),
                let hashes = staging.readyPieceHashes(key, pieces: blobs.map { Int($0.length) }, buffer: buffer)
            {
                if hashes.count > 1 { pieceHashes[key] = hashes }
                if blobs.count == 1 { result.blobsResumed += 1 }
                progress?.complete(count: BlobUploader.units(key.size))
                continue
            }
            if blobs.count == 1 {
                wholeCount += 1
                needs.append(BlobNeed(file: position, blob: 0, into: .readyFile(key)))
                continue
            }
            pending.append(ordinal)
            try staging.preparePartial(key)
            var offset: Int64 = 0
            for (place, blob) in blobs.enumerated() {
                defer { offset += Int64(blob.length) }
                if staging.done.contains(PullStaging.JournalRecord(content: key, offset: offset, digest: blob.digest)) {
                    result.blobsResumed += 1
                    continue
                }
                needs.append(BlobNeed(file: position, blob: place, into: .content(key, offset: offset)))
            }
        }
    }

    /// Once the blobs are fetched (`readied`: the ready files the transfers wrote and
    /// checked): every assembled content checked whole against its XXH3, the streams'
    /// staged blobs hashed, the chunk lists made; then the moment they were all checked
    /// marked, and every content handed over as the save engine will ask for it.
    consuming func finish(readied: Int, result: inout PullResult) throws -> PulledContents {
        for position in pending.lazy.map(Int.init) {
            let key = wanted.files[position].key
            let hashes = try staging.finish(key, pieces: blobs(at: position).map { Int($0.length) }, buffer: buffer)
            if hashes.count > 1 { pieceHashes[key] = hashes }
            progress?.complete(count: 1)
        }
        progress?.complete(count: wholeCount)
        let buffer = buffer  // read while `pieceHashes` is written
        for (key, parts) in streamed {
            for (index, part) in parts.enumerated() where pieceHashes[key]?[index] == nil {
                if case .blob(let path, let digest, let length) = part {
                    pieceHashes[key]?[index] = try PullStaging.hashBlob(path, digest: digest, length: length, buffer: buffer)
                }
            }
        }
        recordChunkLists()
        result.contentsAssembled = pending.count + wholeCount + streamed.count
        guard readied == wholeCount else {
            throw RemoteError(
                .verificationFailed,
                "\(wholeCount - readied) of the contents fetched did not arrive; DEST was not changed")
        }
        for (key, parts) in streamed { contents.origins[key] = .stream(StagedContentStream(parts: parts)) }
        contents.checkedBefore = try staging.markChecked()
        return contents
    }

    /// The chunk list of each large content whose every piece hash is known and whose
    /// pieces add up to its size (else the engine does without one).
    mutating func recordChunkLists() {
        for (key, hashes) in pieceHashes where key.size >= ChunkingParameters.standard.fileThreshold {
            guard let position = wanted.position(of: key) else { continue }
            let lengths = blobs(at: position).map { Int64($0.length) }
            guard hashes.count == lengths.count, hashes.allSatisfy({ $0 != nil }) else { continue }
            var offset: Int64 = 0
            var chunks: [FileChunk] = []
            for (length, hash) in zip(lengths, hashes) {
                chunks.append(FileChunk(offset: offset, length: length, hash: hash!))
                offset += length
            }
            if offset == key.size { contents.chunkLists[key] = ChunkList(chunks) }
        }
    }
}
