import Glibc
import Synchronization

/// Walks a directory tree on all cores and produces its `TreeSnapshot`: stat data for
/// every entry and, unless told otherwise, content hashes.
///
/// Never follows a symbolic link (openat2 RESOLVE_NO_SYMLINKS below the root); links are
/// recorded with their target. FIFOs, sockets and devices are not package content: they
/// are left out and reported in `skipped`.
public struct TreeScanner: Sendable {
    /// Decides whether a file's hash (and chunk list) can be taken from elsewhere (a
    /// manifest's stat cache) instead of reading the file. Called from worker threads.
    public typealias HashLookup = @Sendable (_ path: String, _ status: FileStatus) -> KnownContent?
    /// The chunk list recorded for an earlier version of the file at `path` (a manifest's),
    /// whatever its stat data say: a large file that must be read is chunked faster where
    /// its old chunks recur. Only a hint: the result is the same without it.
    package typealias ChunkHintLookup = @Sendable (_ path: String) -> ChunkList?

    /// Threads that list directories and hash files (the calling thread is one of them).
    public var workers: Int
    /// When false, files are not read; their hashes are left `ContentHash.empty` unless
    /// `knownHash` supplies them (and directory hashes are then meaningless).
    public var hashContents: Bool
    /// How files of at least `chunking.fileThreshold` bytes are cut into chunks while they
    /// are hashed (the same pass); their entries carry the list.
    package var chunking: ChunkingParameters = .standard
    /// Supplies hashes known elsewhere, so that those files are not read (see `HashLookup`).
    public var knownHash: HashLookup?
    /// Previous chunk lists of files that must be read (see `ChunkHintLookup`).
    package var previousChunks: ChunkHintLookup?
    /// Names at the top level that are ours and never package content (the manifest).
    public var excludedTopLevelNames: Set<String>
    /// Called from worker threads with the bytes of each file read and hashed (a progress
    /// line's feed; files vouched for by `knownHash` are not read and not reported).
    public var progress: (@Sendable (Int64) -> Void)?
    /// Entries left out at any depth (`--exclude`): neither listed nor, for a directory,
    /// entered. Not reported in `skipped`: leaving them out is what was asked.
    public var exclusions: PathExclusions = .none
    /// Asked before each directory and file: true stops the scan with `CancellationError`
    /// (a save being cancelled while it describes its source). Called from worker threads.
    public var isCancelled: (@Sendable () -> Bool)?
    /// `knownHash` by position in a recorded tree (a manifest's): each directory's files are
    /// found by walking its recorded children beside its sorted listing, not by a search of
    /// the whole tree per file. When set, `knownHash` is not asked.
    package var recordedContent: RecordedContentLookup?
    /// Whether `recordedContent` is the scanned directory's own record (a package's
    /// manifest, scanned in that package): a directory whose entries all carry the stat data
    /// recorded for them keeps no state of its own, and a tree found unchanged throughout is
    /// the recorded tree itself, not a copy built beside it (at a million entries the two
    /// would be 120 MB each). Its entries then keep what the record says beyond the scan's
    /// fields (the source stamps of the files saved from a source folder).
    package var reusesRecordedEntries = false
    /// Whether `Result.hashedPaths` lists the files read when a lookup is set. Off for a
    /// caller that wants only the tree: after a package is copied, its stat cache vouches
    /// for nothing, and a million files read would be a million path strings held.
    public var recordsHashedPaths = true

    /// A scanner; every parameter is the property of the same name. `PackageScan.scan` sets
    /// them up for a package (its manifest as `knownHash`, `.pkgtool` excluded).
    public init(
        workers: Int = ProcessInfoCores.active, hashContents: Bool = true, knownHash: HashLookup? = nil,
        excludedTopLevelNames: Set<String> = []
    ) {
        self.workers = workers
        self.hashContents = hashContents
        self.knownHash = knownHash
        self.excludedTopLevelNames = excludedTopLevelNames
    }

    /// The result of a scan.
    public struct Result: Sendable {
        /// The tree: every entry below the root with its stat data and hashes, and the root hash.
        public var snapshot: TreeSnapshot
        /// Entries left out, with the reason ("FIFO").
        public var skipped: [(path: String, kind: FileKind)]
        /// Files read and hashed (the rest came from `knownHash`).
        public var filesHashed: Int
        /// The files read and hashed, by relative path (the rest came from `knownHash` or `recordedContent`).
        public var hashedPaths: [String]
        /// Bytes read to hash those files.
        public var bytesHashed: Int64
        /// Whether the tree is the record itself, every entry found as recorded
        /// (`reusesRecordedEntries`): the package holds what its manifest says.
        package var isRecordedTree = false
    }

    /// Scans the directory at `root`.
    ///
    /// - Complexity: one `getdents64` per directory, one `fstatat` per entry, and one
    ///   streamed read per file whose hash is not known (for a large file with a previous
    ///   chunk list, plus a `pread` of each chunk that differs from its expected old one).
    public func scan(_ root: String) throws -> Result {
        var walked = try walk(root)
        return walked.assembled()
    }

    /// `scan(_:)` by a scanner used once: its lookups, and the manifest they hold, are let go
    /// once every entry is listed and hashed, before the result is assembled beside the
    /// scan's working state (at a million entries a manifest is as large as the result).
    /// The memory goes back only when the caller hands the scanner over (`consume`) and
    /// holds the manifest nowhere else.
    package consuming func scanReleasingLookups(_ root: String) throws -> Result {
        var walked = try walk(root)
        _ = consume self
        if !walked.allRecorded { walked.releaseRecord() }
        return walked.assembled()
    }

    /// Lists and hashes every entry; the context (and its copy of the scanner) is gone on return.
    private func walk(_ root: String) throws -> Walked {
        let rootDescriptor = try FileDescriptor.open(root, options: [.directory])
        let rootNode = ScanNode(path: "")
        let context = ScanContext(root: rootDescriptor.rawValue, rootPath: root, scanner: self)
        try WorkQueue<ScanJob>.run(
            initial: [.directory(rootNode)], workers: workers,
            makeContext: { ScanWorker(chunking: chunking) },
            process: { job, worker, queue in
                switch job {
                case .directory(let node): try context.list(node, queue: queue)
                case .files(let node, let indices): try context.hash(node, indices, worker: worker, queue: queue)
                }
            })
        withExtendedLifetime(rootDescriptor) {}
        return Walked(
            rootNode: rootNode, recorded: reusesRecordedEntries ? recordedContent?.snapshot : nil,
            allRecorded: !context.divergedFromRecord.load(ordering: .relaxed),
            entryCount: context.entryCount.load(ordering: .relaxed),
            skipped: context.skipped.withLock { $0 }.sorted { PathOrder.pathLess($0.path, $1.path) },
            filesHashed: context.filesHashed.load(ordering: .relaxed),
            hashedPaths: context.hashedPaths.withLock { $0 },
            bytesHashed: context.bytesHashed.load(ordering: .relaxed))
    }

    /// A walked tree, before its entries are put in one array.
    private struct Walked {
        var rootNode: ScanNode
        /// The recorded tree whose entries directories taken from the record keep.
        var recorded: TreeSnapshot?
        /// Whether every directory was taken from the record: the tree is `recorded`.
        var allRecorded: Bool
        var entryCount: Int
        var skipped: [(path: String, kind: FileKind)]
        var filesHashed: Int
        var hashedPaths: [String]
        var bytesHashed: Int64

        /// The result: the nodes' entries depth-first, each node freed once flattened.
        /// Fills the slots of the directories taken from the record, then lets the record
        /// go (when nothing else holds it): the result is then assembled from the nodes
        /// alone, as large a moment as the walk's, never the record beside the result.
        mutating func releaseRecord() {
            guard let record = recorded?.entries else { return }
            rootNode.fillFromRecord(record)
            recorded = nil
        }

        /// The result; a tree taken whole from the record is that record, taken out of
        /// this walk so that it is updated in place rather than copied.
        mutating func assembled() -> Result {
            if allRecorded, var recorded = recorded.take() {
                rootNode.updateRecordedDirectories(&recorded.entries)
                return Result(
                    snapshot: recorded, skipped: skipped, filesHashed: filesHashed, hashedPaths: hashedPaths,
                    bytesHashed: bytesHashed, isRecordedTree: true)
            }
            if let record = recorded?.entries { rootNode.fillFromRecord(record) }
            var entries: [SnapshotEntry] = []
            entries.reserveCapacity(entryCount)
            var freedSinceRelease = entryCount >= ScanNode.releaseInterval * 4 ? 0 : Int.min
            let rootHash = rootNode.flatten(into: &entries, freedSinceRelease: &freedSinceRelease)
            return Result(
                snapshot: TreeSnapshot(entries: entries, rootHash: rootHash), skipped: skipped,
                filesHashed: filesHashed, hashedPaths: hashedPaths, bytesHashed: bytesHashed)
        }
    }
}

/// What a lookup knows of a file's content without reading it: its hash and, for a large
/// file recorded with one, its chunk list.
public struct KnownContent: Sendable, Hashable {
    /// The file's content hash.
    public var hash: ContentHash
    /// The file's chunks, when it is large enough to have them and they are known.
    public var chunks: ChunkList?

    /// What is known of a file: its hash and, optionally, its chunks.
    public init(hash: ContentHash, chunks: ChunkList? = nil) {
        self.hash = hash
        self.chunks = chunks
    }
}

/// What each worker reuses from file to file: a 1 MiB buffer, a hash state and a chunker.
final class ScanWorker {
    let buffer = ChunkBuffer()
    let hasher = ContentHasher()
    var chunker: ChunkingHasher

    init(chunking: ChunkingParameters = .standard) { chunker = ChunkingHasher(parameters: chunking) }
}

enum ScanJob: Sendable {
    case directory(ScanNode)
    case files(ScanNode, [Int])
}

/// Shared, read-mostly state of one scan.
final class ScanContext: Sendable {
    let root: Int32
    let rootPath: String
    let scanner: TreeScanner
    let skipped = Mutex<[(path: String, kind: FileKind)]>([])
    let entryCount = Atomic<Int>(0)
    let filesHashed = Atomic<Int>(0)
    let hashedPaths = Mutex<[String]>([])
    let bytesHashed = Atomic<Int64>(0)
    /// Set when a directory could not be taken from the record (`reusesRecordedEntries`).
    let divergedFromRecord = Atomic<Bool>(false)

    init(root: Int32, rootPath: String, scanner: TreeScanner) {
        self.root = root
        self.rootPath = rootPath
        self.scanner = scanner
    }

    func displayPath(_ relative: String) -> String {
        relative.isEmpty ? rootPath : (rootPath.hasSuffix("/") ? rootPath + relative : rootPath + "/" + relative)
    }

    /// Lists one directory, stats its entries, reads link targets, queues subdirectories
    /// and batches of files to hash.
    func list(_ node: ScanNode, queue: WorkQueue<ScanJob>) throws {
        let handle: FileDescriptor
        if node.path.isEmpty {
            handle = try FileDescriptor.openDirectory(".", relativeTo: root, displayPath: rootPath)
        } else {
            handle = try FileDescriptor.openWithoutSymlinks(
                node.path, relativeTo: root, options: [.directory], displayPath: displayPath(node.path))
        }
        var listed: [(name: String, status: FileStatus)] = []
        for entry in try DirectoryListing.entries(in: handle) {
            if node.path.isEmpty && scanner.excludedTopLevelNames.contains(where: { PathOrder.sameBytes($0, entry.name) }) {
                continue
            }
            let status = try FileSystem.status(
                entry.name, relativeTo: handle.rawValue, displayPath: displayPath(node.childPath(entry.name)))
            if !scanner.exclusions.isEmpty
                && scanner.exclusions.excludes(
                    name: entry.name, isDirectory: status.kind == .directory, path: { node.childPath(entry.name) })
            {
                continue
            }
            guard status.kind.isPackageContent else {
                skipped.withLock { $0.append((node.childPath(entry.name), status.kind)) }
                continue
            }
            listed.append((entry.name, status))
        }
        listed = PathOrder.sortedByName(listed) { $0.name }
        entryCount.add(listed.count, ordering: .relaxed)
        if try takenFromRecord(node, listed: listed, handle: handle, queue: queue) { return }
        node.prepare(count: listed.count, statuses: listed.lazy.map(\.status), largeFileSize: scanner.chunking.fileThreshold)

        // Fill every slot first: once a job is queued, other workers read this node.
        node.names = listed.map(\.name)
        var needsHash: [Bool] = Array(repeating: false, count: listed.count)
        // The recorded siblings, walked beside the sorted listing.
        var recordedChildren = scanner.recordedContent.map { RecordedChildren($0.snapshot, directory: node.path) }
        for (index, item) in listed.enumerated() {
            node.statuses[index] = ScanStat(item.status)
            switch item.status.kind {
            case .directory:
                node.children[index] = ScanNode(path: node.childPath(item.name))
            case .symbolicLink:
                let target = try FileSystem.readSymbolicLinkBytes(
                    item.name, relativeTo: handle.rawValue, sizeHint: Int(item.status.size),
                    displayPath: displayPath(node.childPath(item.name)))
                node.targets[index] = String(decoding: target, as: UTF8.self)
                node.hashes[index] = ContentHash.of(target)
                node.statuses[index].size = Int64(target.count)
            default:
                needsHash[index] = !takeKnownContent(node, index, status: item.status, recorded: &recordedChildren) && scanner.hashContents
            }
        }
        for case let child? in node.children { queue.push(.directory(child)) }
        queueHashing(node, listed.indices.filter { needsHash[$0] }, sizes: listed.map(\.status.size), queue: queue)
    }

    /// Queues the files at `indices` of `node` to be read and hashed, in batches of about 64
    /// files or 8 MiB: both cores stay busy in flat directories without paying a queue
    /// round-trip per small file.
    private func queueHashing(_ node: ScanNode, _ indices: [Int], sizes: [Int64], queue: WorkQueue<ScanJob>) {
        var batch: [Int] = []
        var batchBytes: Int64 = 0
        for index in indices {
            batch.append(index)
            batchBytes += sizes[index]
            if batch.count >= 64 || batchBytes >= 8 << 20 {
                queue.push(.files(node, batch))
                batch = []
                batchBytes = 0
            }
        }
        if !batch.isEmpty { queue.push(.files(node, batch)) }
    }

    /// Takes directory `node` from the record (`TreeScanner.reusesRecordedEntries`) when its
    /// sorted listing is exactly the recorded children, each with the stat data recorded
    /// for it (a file's also vouched for by the stat cache, a link's target the recorded
    /// one): the node then keeps only its subdirectories' nodes, queued here. False, with
    /// nothing kept, otherwise (and the walk then no longer is the record).
    private func takenFromRecord(
        _ node: ScanNode, listed: [(name: String, status: FileStatus)], handle: borrowing FileDescriptor,
        queue: WorkQueue<ScanJob>
    ) throws -> Bool {
        guard scanner.reusesRecordedEntries else { return false }
        guard let recorded = scanner.recordedContent,
            try takeFromRecord(node, listed: listed, handle: handle, recorded: recorded, queue: queue)
        else {
            divergedFromRecord.store(true, ordering: .relaxed)
            return false
        }
        return true
    }

    private func takeFromRecord(
        _ node: ScanNode, listed: [(name: String, status: FileStatus)], handle: borrowing FileDescriptor,
        recorded: RecordedContentLookup, queue: WorkQueue<ScanJob>
    ) throws -> Bool {
        var children = RecordedChildren(recorded.snapshot, directory: node.path)
        guard children.count == listed.count else { return false }
        var subdirectories: [(node: ScanNode, index: Int, stat: ScanStat)] = []
        for item in listed {
            guard let index = children.index(ofChild: item.name),
                try isRecorded(item, at: index, in: node, handle: handle, recorded: recorded)
            else { return false }
            if item.status.kind == .directory {
                subdirectories.append((ScanNode(path: node.childPath(item.name)), index, ScanStat(item.status)))
            }
        }
        node.takeFromRecord(firstChild: children.first, count: listed.count, subdirectories: subdirectories)
        for child in subdirectories { queue.push(.directory(child.node)) }
        return true
    }

    /// Whether the recorded entry `index` says what a scan of `item` would: exactly, for a
    /// link; for a file all but a change time the stat cache accepts (one a save's own
    /// rename gave it after its record was written: a journaled save commits its record
    /// before it renames, so the folders it touched would otherwise never match again);
    /// for a directory its kind and mode (a manifest records the stat data of the folder a
    /// package was saved from, and a directory's are the scan's anyway).
    private func isRecorded(
        _ item: (name: String, status: FileStatus), at index: Int, in node: ScanNode, handle: borrowing FileDescriptor,
        recorded: RecordedContentLookup
    ) throws -> Bool {
        let entry = recorded.snapshot.entries[index]
        let status = item.status
        guard entry.kind == status.kind, entry.permissions == status.permissions else { return false }
        if status.kind == .directory { return true }
        guard entry.modificationTime == status.modificationTime, entry.inode == status.inode,
            entry.device == status.device
        else { return false }
        switch status.kind {
        case .regular:
            // The stat cache's rule, change time included.
            return recorded.known(index, status) != nil
        case .symbolicLink:
            guard entry.changeTime == status.changeTime else { return false }
            let target = try FileSystem.readSymbolicLinkBytes(
                item.name, relativeTo: handle.rawValue, sizeHint: Int(status.size),
                displayPath: displayPath(node.childPath(item.name)))
            // Compared as the scan would record it: the text, and the hash of its bytes.
            guard let recordedTarget = entry.linkTarget, entry.size == Int64(target.count),
                entry.hash == ContentHash.of(target)
            else { return false }
            return recordedTarget.utf8.elementsEqual(String(decoding: target, as: UTF8.self).utf8)
        default:
            return false
        }
    }

    /// Fills the hash (and chunk list) of file `index` of `node` from the recorded tree or
    /// `knownHash` when they vouch for its `status`; false when the file must be read.
    private func takeKnownContent(
        _ node: ScanNode, _ index: Int, status: FileStatus, recorded children: inout RecordedChildren?
    ) -> Bool {
        let name = node.names[index]
        let known: KnownContent?
        if let recorded = scanner.recordedContent {
            // Found by position: the recorded entry's path is this file's, byte for byte.
            known = children?.index(ofChild: name).flatMap { recorded.known($0, status) }
        } else {
            known = scanner.knownHash?(node.childPath(name), status)
        }
        guard let known else { return false }
        node.hashes[index] = known.hash
        if let chunks = known.chunks {
            // Here, before any job of this node is queued, the slots may still be made.
            node.makeChunkSlotsIfNeeded()
            node.chunkLists[index] = chunks
        }
        return true
    }

    /// Hashes the files at `indices` of `node`. A large file gets the chunking helper thread
    /// only while another worker is idle: `workers` bounds the scan's threads (`--jobs 1`
    /// is one thread), and a helper beside busy workers would only take turns with them.
    func hash(_ node: ScanNode, _ indices: [Int], worker: ScanWorker, queue: WorkQueue<ScanJob>) throws {
        for index in indices {
            if scanner.isCancelled?() == true { throw CancellationError() }
            let relative = node.childPath(node.names[index])
            let file = try FileDescriptor.openWithoutSymlinks(
                relative, relativeTo: root, options: [.nonBlocking, .noFollow], displayPath: displayPath(relative))
            let expectedSize = node.statuses[index].size
            let size: Int64
            if expectedSize >= scanner.chunking.fileThreshold {
                worker.chunker.mayUseHelper = queue.hasIdleWorker
                let digest = try ContentHash.ofFileWithChunks(
                    file, buffer: worker.buffer, expectedSize: expectedSize, chunker: &worker.chunker,
                    previous: scanner.previousChunks?(relative))
                node.hashes[index] = digest.hash
                node.chunkLists[index] = digest.chunks
                size = digest.size
            } else {
                let (hash, read) = try ContentHash.ofFile(
                    file, buffer: worker.buffer, expectedSize: expectedSize, hasher: worker.hasher)
                node.hashes[index] = hash
                size = read
            }
            node.statuses[index].size = size
            filesHashed.add(1, ordering: .relaxed)
            if scanner.recordsHashedPaths && (scanner.knownHash != nil || scanner.recordedContent != nil) {
                hashedPaths.withLock { $0.append(relative) }
            }
            bytesHashed.add(size, ordering: .relaxed)
            scanner.progress?(size)
        }
    }
}

/// One directory of a scan in progress.
///
/// Its arrays are filled by the job that lists it; afterwards each file slot is written by
/// exactly one hashing job and read only after the whole queue has drained (the queue's
/// lock orders those accesses), hence `@unchecked Sendable`. A scan of a million files holds
/// all its nodes at once, beside the tree it then assembles: the slots no entry of this
/// directory needs (chunk lists without a large file, targets without a link, child nodes
/// without a subdirectory) are not made.
final class ScanNode: @unchecked Sendable {
    let path: String
    var names: [String] = []
    var statuses: UnsafeMutableBufferPointer<ScanStat> = .init(start: nil, count: 0)
    var hashes: UnsafeMutableBufferPointer<ContentHash> = .init(start: nil, count: 0)
    /// Empty unless a file here is large enough to be chunked or known with chunks.
    var chunkLists: UnsafeMutableBufferPointer<ChunkList?> = .init(start: nil, count: 0)
    /// Empty unless a link is here.
    var targets: [String?] = []
    /// Empty unless a subdirectory is here.
    var children: [ScanNode?] = []
    /// For a directory taken from the record (`TreeScanner.reusesRecordedEntries`): the
    /// recorded index of its first child, and its children's count; its subdirectories'
    /// nodes are `children`, in order, their recorded indices and stat data now beside,
    /// and it has no other slots. Nil otherwise.
    private(set) var recordedChildren: (first: Int, count: Int)?
    private var subdirectoryRecords: [(index: Int, stat: ScanStat)] = []

    init(path: String) { self.path = path }

    /// How many entries' nodes a large scan frees between two returns of their pages.
    static let releaseInterval = 8192

    func childPath(_ name: String) -> String { path.isEmpty ? name : path + "/" + name }

    /// Makes the slots of `count` entries whose stat data are `statuses`: those every entry
    /// has, and those only some kinds need when one of them is here.
    func prepare(count: Int, statuses listed: some Sequence<FileStatus>, largeFileSize: Int64) {
        names.reserveCapacity(count)
        statuses = .allocate(capacity: count)
        statuses.initialize(repeating: ScanStat())
        hashes = .allocate(capacity: count)
        hashes.initialize(repeating: .empty)
        var (large, link, directory) = (false, false, false)
        for status in listed {
            switch status.kind {
            case .regular: large = large || status.size >= largeFileSize
            case .symbolicLink: link = true
            case .directory: directory = true
            default: break
            }
        }
        if large { makeChunkSlotsIfNeeded(count: count) }
        if link { targets = Array(repeating: nil, count: count) }
        if directory { children = Array(repeating: nil, count: count) }
    }

    /// Marks this directory as its record: `count` children from recorded index
    /// `firstChild`, of which `subdirectories` are the directories, in order.
    func takeFromRecord(firstChild: Int, count: Int, subdirectories: [(node: ScanNode, index: Int, stat: ScanStat)]) {
        recordedChildren = (firstChild, count)
        children = subdirectories.map(\.node)
        subdirectoryRecords = subdirectories.map { ($0.index, $0.stat) }
    }

    /// Writes the stat data the scan found for every directory below into `entries`, the
    /// record of a tree whose every directory was taken from it (the only field a record
    /// can hold otherwise: a manifest keeps those of the folders it was saved from).
    func updateRecordedDirectories(_ entries: inout [SnapshotEntry]) {
        for (index, stat) in subdirectoryRecords {
            entries[index].modificationTime = stat.modificationTime
            entries[index].changeTime = stat.changeTime
            entries[index].inode = stat.inode
            entries[index].device = stat.device
        }
        for case let child? in children { child.updateRecordedDirectories(&entries) }
    }

    /// Gives every directory below (this one included) taken from the record the slots a
    /// listing would have filled, from the recorded entries: the same stat data and
    /// hashes, since the record matched them (after the walk, on one thread).
    func fillFromRecord(_ record: [SnapshotEntry]) {
        if let (first, count) = recordedChildren {
            recordedChildren = nil
            var indices: [Int] = []
            indices.reserveCapacity(count)
            var index = first
            for _ in 0..<count {
                indices.append(index)
                index += record[index].subtreeSpan
            }
            fill(from: record, at: indices)
        }
        for case let child? in children { child.fillFromRecord(record) }
    }

    /// The slots of the recorded entries at `indices`, this directory's children in order;
    /// `children` holds the subdirectories' nodes only, and is spread to one slot an entry.
    private func fill(from record: [SnapshotEntry], at indices: [Int]) {
        let subdirectories = children
        var directoryStats = subdirectoryRecords.makeIterator()
        subdirectoryRecords = []
        let count = indices.count
        names = indices.map { String(record[$0].entryPath.name) }
        statuses = .allocate(capacity: count)
        hashes = .allocate(capacity: count)
        for (slot, index) in indices.enumerated() {
            let stat = record[index].kind == .directory ? directoryStats.next()!.stat : ScanStat(record[index])
            (statuses.baseAddress! + slot).initialize(to: stat)
            (hashes.baseAddress! + slot).initialize(to: record[index].hash)
        }
        if indices.contains(where: { record[$0].chunks != nil }) {
            makeChunkSlotsIfNeeded(count: count)
            for (slot, index) in indices.enumerated() { chunkLists[slot] = record[index].chunks }
        }
        if indices.contains(where: { record[$0].kind == .symbolicLink }) {
            targets = indices.map { record[$0].linkTarget }
        }
        children = []
        guard !subdirectories.isEmpty else { return }
        children = Array(repeating: nil, count: count)
        var next = subdirectories.makeIterator()
        for (slot, index) in indices.enumerated() where record[index].kind == .directory { children[slot] = next.next()! }
    }

    /// The chunk-list slots, made once (by the listing job, before any hashing job).
    func makeChunkSlotsIfNeeded(count: Int? = nil) {
        guard chunkLists.baseAddress == nil else { return }
        let count = count ?? hashes.count
        chunkLists = .allocate(capacity: count)
        chunkLists.initialize(repeating: nil)
    }

    deinit {
        statuses.deallocate()
        hashes.deallocate()
        if chunkLists.baseAddress != nil {
            _ = chunkLists.deinitialize()
            chunkLists.deallocate()
        }
    }

    /// Appends this directory's entries depth-first and returns its Merkle hash. Each
    /// subdirectory's node is released once flattened, so that the scan's working state
    /// and its result are not both held whole.
    ///
    /// In a large scan (`freedSinceRelease` not `Int.min`), the pages of the nodes freed so
    /// far are given back to the system every `releaseInterval` entries: they were
    /// allocated on the workers' threads, in arenas the result's one large block cannot
    /// reuse, so the scan's state and its result would otherwise both stay resident.
    func flatten(into entries: inout [SnapshotEntry], freedSinceRelease: inout Int) -> ContentHash {
        var builder = TreeHashBuilder()
        // The children's shared folder: this directory's path, stored once.
        let folder = path.isEmpty ? nil : SharedFolder(path)
        for index in names.indices {
            let status = statuses[index]
            let hasChild = !children.isEmpty && children[index] != nil
            let position = entries.count
            entries.append(
                SnapshotEntry(
                    storedPath: EntryPath(folder: folder, name: names[index]), kind: status.kind, permissions: status.permissions,
                    size: status.kind == .directory ? 0 : status.size, hash: hashes[index],
                    modificationTime: status.modificationTime, changeTime: status.changeTime,
                    inode: status.inode, device: status.device, linkTarget: targets.isEmpty ? nil : targets[index],
                    chunks: chunkLists.baseAddress == nil ? nil : chunkLists[index]))
            if hasChild, let child = children[index] {
                children[index] = nil
                entries[position].hash = child.flatten(into: &entries, freedSinceRelease: &freedSinceRelease)
                entries[position].descendantCount = entries.count - position - 1
                if freedSinceRelease >= Self.releaseInterval {
                    ProcessEnvironment.releaseFreeMemory()
                    freedSinceRelease = 0
                }
            }
            builder.add(name: names[index], tag: entries[position].tag, hash: entries[position].hash)
        }
        freedSinceRelease &+= names.count
        return builder.finish()
    }
}

/// The stat data a scan keeps of each entry: what its snapshot entry records (48 bytes, not
/// the 64 of a `FileStatus`, whose owner, group and link count no entry keeps).
struct ScanStat {
    var size: Int64 = 0
    var modificationTime: Int64 = 0
    var changeTime: Int64 = 0
    var inode: UInt64 = 0
    var device: UInt64 = 0
    var permissions: UInt32 = 0
    var kind: FileKind = .unknown

    init() {}

    /// What a recorded entry says (the record of an entry whose stat data matched it).
    init(_ entry: SnapshotEntry) {
        size = entry.size
        modificationTime = entry.modificationTime
        changeTime = entry.changeTime
        inode = entry.inode
        device = entry.device
        permissions = entry.permissions
        kind = entry.kind
    }

    init(_ status: FileStatus) {
        size = status.size
        modificationTime = status.modificationTime
        changeTime = status.changeTime
        inode = status.inode
        device = status.device
        permissions = status.permissions
        kind = status.kind
    }
}
