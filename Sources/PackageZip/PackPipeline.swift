import Dispatch
import Glibc
import PackageCore
import Synchronization

/// One piece of work: up to 1 MiB of one file, read, checksummed and (maybe) deflated.
struct ChunkJob: Sendable {
    let entry: Int
    let offset: Int64
    let length: Int
    let isLast: Bool
}

/// A buffer pair a worker fills and the writer drains.
///
/// Written by exactly one worker between its claim of a job and `ready.signal()`, read by
/// the writer after `ready.wait()`, and reused only after the writer's `free.signal()`: the
/// semaphores order every access, hence `@unchecked Sendable`.
final class ChunkSlot: @unchecked Sendable {
    /// 32 KiB of dictionary room, then the chunk.
    let input = UnsafeMutableRawBufferPointer.allocate(
        byteCount: ZipPacker.dictionarySize + ZipPacker.chunkSize, alignment: 4096)
    let output = UnsafeMutableRawBufferPointer.allocate(byteCount: Deflater.bound(ZipPacker.chunkSize), alignment: 4096)
    var dataStart = 0
    var dataCount = 0
    var outputCount = 0
    var crc: UInt32 = 0
    var method: ZipMethod = .stored
    var failure: (any Error)?
    let ready = DispatchSemaphore(value: 0)

    deinit {
        input.deallocate()
        output.deallocate()
    }

    var data: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: input[dataStart..<(dataStart + dataCount)]) }
    /// What goes into the archive: the deflated bytes, or the data itself when stored.
    var payload: UnsafeRawBufferPointer {
        method == .deflated ? UnsafeRawBufferPointer(rebasing: output[..<outputCount]) : data
    }
}

/// Per-worker state: the deflate streams and sample buffers, reused for every chunk.
final class PackWorker {
    var deflater: Deflater
    var trialDeflater = Deflater(level: 1, framing: .raw)
    let sample = UnsafeMutableRawBufferPointer.allocate(byteCount: 3 * Compressibility.window, alignment: 16)
    let scratch = UnsafeMutableRawBufferPointer.allocate(
        byteCount: Deflater.bound(3 * Compressibility.window), alignment: 16)

    init(level: Int) { deflater = Deflater(level: max(level, 1), framing: .raw) }

    deinit {
        sample.deallocate()
        scratch.deallocate()
    }
}

/// Parallel compression with in-order writing: workers claim chunk jobs in order and fill
/// a ring of slots; the writer drains the slots in the same order.
final class PackPipeline: Sendable {
    let entries: [PackEntry]
    let jobs: [ChunkJob]
    /// Index of each entry's first job (entries without jobs: the next entry's).
    let firstJob: [Int]
    let slots: [ChunkSlot]
    let root: Int32
    let source: String
    let level: Int
    let workerCount: Int
    private let free: DispatchSemaphore
    private let nextJob = Atomic<Int>(0)
    private let cancelled = Atomic<Bool>(false)
    /// The caller's cancellation, asked before each entry is written.
    let cancellation: SaveCancellation?

    init(
        entries: [PackEntry], root: Int32, source: String, level: Int, workers: Int, cancellation: SaveCancellation? = nil
    ) {
        self.cancellation = cancellation
        self.entries = entries
        var jobs: [ChunkJob] = []
        var firstJob: [Int] = []
        firstJob.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            firstJob.append(jobs.count)
            guard entry.needsCompression else { continue }
            let count = entry.chunkCount
            for chunk in 0..<count {
                let offset = Int64(chunk) * Int64(ZipPacker.chunkSize)
                jobs.append(
                    ChunkJob(
                        entry: index, offset: offset, length: Int(min(Int64(ZipPacker.chunkSize), entry.size - offset)),
                        isLast: chunk == count - 1))
            }
        }
        self.jobs = jobs
        self.firstJob = firstJob
        self.root = root
        self.source = source
        self.level = level
        self.workerCount = workers
        let slotCount = min(2 * workers + 2, max(jobs.count, 1))
        self.slots = (0..<slotCount).map { _ in ChunkSlot() }
        self.free = DispatchSemaphore(value: slotCount)
    }

    func displayPath(_ relative: String) -> String { RelativePath.join(source, relative) }

    // MARK: Workers

    private func workerLoop() {
        let worker = PackWorker(level: level)
        while true {
            free.wait()
            if cancelled.load(ordering: .acquiring) { return }
            let index = nextJob.add(1, ordering: .relaxed).oldValue
            if index >= jobs.count {
                free.signal()
                return
            }
            let slot = slots[index % slots.count]
            slot.failure = nil
            do { try process(jobs[index], into: slot, worker: worker) } catch { slot.failure = error }
            slot.ready.signal()
        }
    }

    private func process(_ job: ChunkJob, into slot: ChunkSlot, worker: PackWorker) throws {
        let entry = entries[job.entry]
        let path = entry.entryPath.string
        let shown = displayPath(path)
        let file = try FileDescriptor.openWithoutSymlinks(
            path, relativeTo: root, options: [.nonBlocking, .noFollow], displayPath: shown)
        var method: ZipMethod
        if let forced = entry.forcedMethod {
            method = forced
        } else if job.offset == 0 && job.isLast {
            method = .deflated  // one chunk: decided below from the data itself
        } else {
            method = try entry.decision.withLock { decided in
                if let decided { return decided }
                let chosen = try decide(entry, file: file, worker: worker)
                decided = chosen
                return chosen
            }
        }
        // Read the chunk, and the 32 KiB before it as the dictionary of a continued stream.
        let dictionary = method == .deflated ? Int(min(Int64(ZipPacker.dictionarySize), job.offset)) : 0
        slot.dataStart = ZipPacker.dictionarySize - dictionary
        let wanted = dictionary + job.length
        let region = UnsafeMutableRawBufferPointer(rebasing: slot.input[slot.dataStart..<(slot.dataStart + wanted)])
        let got = try file.readFully(into: region, at: job.offset - Int64(dictionary))
        guard got == wanted else {
            throw FileSystemError(.read, path: shown, reason: "the file shrank while it was being packed")
        }
        // A file that grew since the scan would be cut at the size the entry declares
        // (Info-ZIP's zip warns "file size changed"): refused like one that shrank.
        if job.isLast, try file.status().size != entry.size {
            throw FileSystemError(.read, path: shown, reason: "the file grew while it was being packed")
        }
        slot.dataStart = ZipPacker.dictionarySize
        slot.dataCount = job.length
        let data = slot.data
        slot.crc = CRC32.update(0, data)
        if method == .deflated && job.offset == 0 && job.isLast && entry.forcedMethod == nil {
            // A whole small file: sample it, and store it anyway if deflate does not shrink it.
            if !worthDeflating(data, worker: worker) { method = .stored }
        }
        if method == .deflated {
            let primed = UnsafeRawBufferPointer(rebasing: slot.input[(slot.dataStart - dictionary)..<slot.dataStart])
            guard
                let produced = worker.deflater.compress(
                    data, dictionary: dictionary > 0 ? primed : nil, final: job.isLast, into: slot.output)
            else { throw FileSystemError(.read, path: shown, reason: "zlib could not deflate this chunk") }
            slot.outputCount = produced
            if job.offset == 0 && job.isLast && produced >= data.count && entry.forcedMethod == nil {
                method = .stored
            }
        }
        slot.method = method
    }

    /// Deflate or store for a file of several chunks, from three 16 KiB windows.
    private func decide(_ entry: PackEntry, file: borrowing FileDescriptor, worker: PackWorker) throws -> ZipMethod {
        let window = Compressibility.window
        let positions = [Int64(0), entry.size / 2 - Int64(window / 2), entry.size - Int64(window)]
        var filled = 0
        for position in positions {
            let target = UnsafeMutableRawBufferPointer(rebasing: worker.sample[filled..<(filled + window)])
            filled += try file.readFully(into: target, at: max(0, position))
        }
        return worthDeflating(UnsafeRawBufferPointer(rebasing: worker.sample[..<filled]), worker: worker)
            ? .deflated : .stored
    }

    /// Whether a sample looks compressible: histogram first, a level-1 trial when unclear.
    private func worthDeflating(_ data: UnsafeRawBufferPointer, worker: PackWorker) -> Bool {
        var sample = data
        if data.count > 3 * Compressibility.window {
            // Three windows of a whole small file (up to 1 MiB), gathered into the sample buffer.
            let window = Compressibility.window
            for (slot, start) in [0, data.count / 2 - window / 2, data.count - window].enumerated() {
                UnsafeMutableRawBufferPointer(rebasing: worker.sample[(slot * window)..<((slot + 1) * window)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: data[start..<(start + window)]))
            }
            sample = UnsafeRawBufferPointer(worker.sample)
        }
        switch Compressibility.quickVerdict(sample) {
        case .deflate: return true
        case .store: return false
        case .trial: return Compressibility.trial(sample, deflater: &worker.trialDeflater, scratch: worker.scratch)
        }
    }

    // MARK: Writer

    /// Starts the workers, writes every entry in order to `file`, and stops the workers,
    /// also when writing fails.
    ///
    /// With `appending`, the entries it keeps are not written, the others go after the old
    /// archive's end, and the new central directory and end records are returned, not
    /// written: the caller records them before they go to disk (`InPlaceAppend`).
    @discardableResult
    func run(
        writingTo file: borrowing FileDescriptor, base: ZipArchive?, appending: AppendLayout? = nil,
        report: inout ZipPackReport, progress: (@Sendable (Int64) -> Void)?
    ) throws -> ArchiveTail? {
        let group = DispatchGroup()
        let injector = IOFaultInjection.injector
        let workers = jobs.isEmpty ? 0 : min(workerCount, jobs.count)
        for _ in 0..<workers {
            DispatchQueue.global().async(group: group) {
                IOFaultInjection.withInjector(injector) { self.workerLoop() }
            }
        }
        let tail: ArchiveTail?
        do {
            tail = try write(to: file, base: base, appending: appending, report: &report, progress: progress)
        } catch {
            cancelled.store(true, ordering: .releasing)
            for _ in 0..<(slots.count + workers) { free.signal() }
            group.wait()
            throw error
        }
        group.wait()
        return tail
    }

    /// What `write` gathers across the entries: the output's position, the raw copies and
    /// the central directory that come after the last entry.
    private struct Written {
        let out: OutputBuffer
        /// Unchanged entries' bytes: ranges of the output left for parallel kernel copies.
        var copies: [RawCopy] = []
        var central: RecordBuilder
        /// Appending, the first central record carries the dead ranges: written last.
        var firstCentral: EntryHeader?

        /// Adds `header`'s central record, or holds it back as the first one of an append.
        mutating func addCentral(_ header: EntryHeader, heldBack: Bool) {
            if heldBack { firstCentral = header } else { HeaderWriter.central(header, into: &central) }
        }
    }

    /// Writes every entry in order, then the central directory and end record; appending,
    /// returns those instead (`run`).
    /// Room for every central record at once (at a million entries, a regrown buffer would
    /// hold two copies of about 100 MB): the fixed fields, the largest extras this writer
    /// gives a record (ZIP64, timestamp, content hash) and the name with a directory's "/".
    /// The slack is never written, so its pages cost no memory.
    static func centralDirectoryBound(_ entries: [PackEntry]) -> Int {
        let perRecord = 46 + (4 + 24) + (4 + 5) + (4 + ContentHashField.dataLength) + 1
        return entries.reduce(64) { $0 + perRecord + $1.entryPath.byteCount }
    }

    private func write(
        to file: borrowing FileDescriptor, base: ZipArchive?, appending: AppendLayout?, report: inout ZipPackReport,
        progress: (@Sendable (Int64) -> Void)?
    ) throws -> ArchiveTail? {
        var written = Written(
            out: OutputBuffer(startingAt: appending?.start ?? 0), central: RecordBuilder(capacity: Self.centralDirectoryBound(entries)))
        let hasher = ContentHasher()
        for (index, entry) in entries.enumerated() {
            if cancellation?.isCancelled == true { throw CancellationError() }
            if let kept = appending?.kept[index] {
                // In place already: only its central record is new.
                count(kept, as: entry, report: &report, progress: progress)
                written.addCentral(kept, heldBack: index == 0)
                continue
            }
            let header = try writeEntry(
                index, to: file, base: base, written: &written, hasher: hasher, report: &report, progress: progress)
            written.addCentral(header, heldBack: appending != nil && index == 0)
            report.entries += 1
        }
        if let appending { return try appendTail(appending, written, to: file, base: base, report: &report) }
        try finishArchive(written, to: file, base: base, report: &report)
        return nil
    }

    /// Writes one entry that is not kept in place: a directory, a link, a file copied raw
    /// from the base or a new file. Returns its header, for the central directory.
    private func writeEntry(
        _ index: Int, to file: borrowing FileDescriptor, base: ZipArchive?, written: inout Written,
        hasher: borrowing ContentHasher, report: inout ZipPackReport, progress: (@Sendable (Int64) -> Void)?
    ) throws -> EntryHeader {
        let entry = entries[index]
        let out = written.out
        var header = PackPipeline.header(for: entry)
        header.localHeaderOffset = out.position
        switch entry.kind {
        case .directory:
            try out.append(HeaderWriter.local(header).bytes, to: file)
            report.directories += 1
        case .symbolicLink:
            let target = PackPipeline.fillLink(&header, entry)
            try out.append(HeaderWriter.local(header).bytes, to: file)
            try out.append(target, to: file)
            report.links += 1
            report.stored += 1
            report.inputBytes += header.uncompressedSize
        default:
            if let old = entry.reuse(in: base) {
                try writeReused(old, header: &header, to: file, base: base, written: &written)
                report.reused += 1
                if old.method == .deflated { report.deflated += 1 } else { report.stored += 1 }
                progress?(header.uncompressedSize)
            } else {
                try writeFile(index, entry, header: &header, out: out, file: file, hasher: hasher, progress: progress)
                if header.method == .deflated { report.deflated += 1 } else { report.stored += 1 }
            }
            report.files += 1
            report.inputBytes += header.uncompressedSize
        }
        return header
    }

    /// An unchanged file: room for its bytes is reserved in the output, to be copied raw
    /// from the base after the last entry (the base's local header too, when it is the
    /// same bytes; else a new one is written and only the data copied).
    private func writeReused(
        _ old: ZipEntry, header: inout EntryHeader, to file: borrowing FileDescriptor, base: ZipArchive?,
        written: inout Written
    ) throws {
        PackPipeline.fillReused(&header, from: old)
        let local = HeaderWriter.local(header).bytes
        let out = written.out
        if try sameLocalHeader(local, as: old, in: base) {
            // Header and data as they are: one range, merged with its neighbours.
            let length = old.dataOffset - old.localHeaderOffset + old.compressedSize
            let at = try out.reserve(length, in: file)
            RawCopy.add(RawCopy(source: old.localHeaderOffset, destination: at, length: length), to: &written.copies)
        } else {
            try out.append(local, to: file)
            let at = try out.reserve(old.compressedSize, in: file)
            RawCopy.add(RawCopy(source: old.dataOffset, destination: at, length: old.compressedSize), to: &written.copies)
        }
    }

    /// The end of an append: what is buffered is flushed and the raw copies made; the new
    /// central directory (its first record carrying the dead ranges) and end record are
    /// returned, not written, for `InPlaceAppend` to record first.
    private func appendTail(
        _ appending: AppendLayout, _ written: Written, to file: borrowing FileDescriptor, base: ZipArchive?,
        report: inout ZipPackReport
    ) throws -> ArchiveTail {
        let out = written.out
        try out.flush(to: file)
        if let base, !written.copies.isEmpty {
            try RawCopy.run(
                written.copies, from: base.file.rawValue, path: base.path, to: file.rawValue, path: file.path,
                workers: workerCount)
        }
        var head = RecordBuilder(capacity: 256 + appending.deadField.count)
        if let firstCentral = written.firstCentral {
            HeaderWriter.central(firstCentral, extra: appending.deadField, into: &head)
        }
        let centralBytes = head.bytes + written.central.bytes
        let centralOffset = out.position
        let end = HeaderWriter.end(
            entryCount: entries.count, centralOffset: centralOffset, centralSize: Int64(centralBytes.count))
        report.archiveBytes = centralOffset + Int64(centralBytes.count + end.count)
        if cancellation?.isCancelled == true { throw CancellationError() }
        return ArchiveTail(offset: centralOffset, bytes: centralBytes + end)
    }

    /// The end of a whole archive: the central directory and end record written and
    /// flushed, then the raw copies made into the room left for them, and the file's
    /// offset left at its end.
    private func finishArchive(
        _ written: Written, to file: borrowing FileDescriptor, base: ZipArchive?, report: inout ZipPackReport
    ) throws {
        let out = written.out
        let central = written.central
        let centralOffset = out.position
        try out.append(central.bytes, to: file)
        try out.append(
            HeaderWriter.end(entryCount: entries.count, centralOffset: centralOffset, centralSize: Int64(central.bytes.count)),
            to: file)
        try out.flush(to: file)
        report.archiveBytes = out.position
        if cancellation?.isCancelled == true { throw CancellationError() }
        if let base, !written.copies.isEmpty {
            try RawCopy.run(
                written.copies, from: base.file.rawValue, path: base.path, to: file.rawValue, path: file.path,
                workers: workerCount)
        }
        // Asked once more before the archive replaces OUT.zip: a repack spends its time in
        // the copies above, after the last entry's check.
        if cancellation?.isCancelled == true { throw CancellationError() }
        try file.seek(to: report.archiveBytes)
    }

    /// The header every entry starts from: name, kind, mode, time; sizes to come.
    static func header(for entry: PackEntry) -> EntryHeader {
        var header = EntryHeader(
            name: entry.name, kind: entry.kind, permissions: entry.permissions,
            modificationTime: entry.modificationTime, method: .stored, uncompressedSize: 0, localZip64: false)
        header.bareLocalHeader = entry.isFirst
        return header
    }

    /// A link's sizes, CRC and hash, from its target; returns the target's bytes.
    @discardableResult
    static func fillLink(_ header: inout EntryHeader, _ entry: PackEntry) -> [UInt8] {
        let target = Array((entry.linkTarget ?? "").utf8)
        header.uncompressedSize = Int64(target.count)
        header.compressedSize = header.uncompressedSize
        header.crc32 = CRC32.of(target)
        header.contentHash = ContentHash.of(target)
        return target
    }

    /// A reused file's method, CRC, sizes and hash, from the base's entry.
    static func fillReused(_ header: inout EntryHeader, from old: ZipEntry) {
        header.method = old.method
        header.crc32 = old.crc32
        header.compressedSize = old.compressedSize
        header.uncompressedSize = old.uncompressedSize
        header.contentHash = old.contentHash
        header.localZip64 =
            old.uncompressedSize >= Int64(ZipFormat.marker32) || old.compressedSize >= Int64(ZipFormat.marker32)
    }

    /// The counts and progress of an entry an append keeps in place.
    private func count(
        _ kept: EntryHeader, as entry: PackEntry, report: inout ZipPackReport, progress: (@Sendable (Int64) -> Void)?
    ) {
        report.entries += 1
        switch entry.kind {
        case .directory: report.directories += 1
        case .symbolicLink:
            report.links += 1
            report.stored += 1
            report.inputBytes += kept.uncompressedSize
        default:
            report.files += 1
            report.reused += 1
            report.inputBytes += kept.uncompressedSize
            if kept.method == .deflated { report.deflated += 1 } else { report.stored += 1 }
            progress?(kept.uncompressedSize)
        }
    }

    /// Whether the base's local header of `old` is byte for byte `local` (the same name,
    /// time, flags and fields: an unchanged entry of an archive pkgtool wrote).
    private func sameLocalHeader(_ local: [UInt8], as old: ZipEntry, in base: ZipArchive?) throws -> Bool {
        guard let base, Int64(local.count) == old.dataOffset - old.localHeaderOffset else { return false }
        var existing = [UInt8](repeating: 0, count: local.count)
        let got = try existing.withUnsafeMutableBytes { try base.file.readFully(into: $0, at: old.localHeaderOffset) }
        return got == local.count && existing == local
    }

    /// Writes one new file's local header and its chunks as the workers finish them, then
    /// patches the header's CRC, sizes and hash.
    private func writeFile(
        _ index: Int, _ entry: PackEntry, header: inout EntryHeader, out: OutputBuffer,
        file: borrowing FileDescriptor, hasher: borrowing ContentHasher, progress: (@Sendable (Int64) -> Void)?
    ) throws {
        hasher.reset()
        var crc: UInt32 = 0
        var compressed: Int64 = 0
        var localOffset = Int64(0)
        var layout = HeaderWriter.LocalLayout(length: 0)
        var localBytes: [UInt8] = []
        let first = firstJob[index]
        for jobIndex in first..<(first + entry.chunkCount) {
            let slot = slots[jobIndex % slots.count]
            slot.ready.wait()
            if let failure = slot.failure { throw failure }
            if jobIndex == first {
                header.method = slot.method
                header.uncompressedSize = entry.size
                header.localZip64 =
                    entry.size >= Int64(ZipFormat.marker32)
                    || (slot.method == .deflated && Int64(Deflater.bound(Int(entry.size))) >= Int64(ZipFormat.marker32))
                (localBytes, layout) = HeaderWriter.local(header)
                localOffset = out.position
                try out.append(localBytes, to: file)
            }
            let job = jobs[jobIndex]
            hasher.update(slot.data)
            crc = jobIndex == first ? slot.crc : CRC32.combine(crc, slot.crc, secondLength: Int64(job.length))
            let payload = slot.payload
            compressed += Int64(payload.count)
            try out.append(payload, to: file)
            free.signal()
            progress?(Int64(job.length))
        }
        header.crc32 = crc
        header.compressedSize = compressed
        header.contentHash = hasher.digest()
        HeaderWriter.patch(&localBytes, at: 0, layout: layout, header: header)
        try out.overwrite(localBytes, at: localOffset, to: file)
    }
}


/// A range of the base archive copied unchanged into the new one.
struct RawCopy: Sendable {
    let source: Int64
    let destination: Int64
    let length: Int64

    /// Appends `copy`, merging it into the last range when both continue it.
    static func add(_ copy: RawCopy, to copies: inout [RawCopy]) {
        if let last = copies.last, last.source + last.length == copy.source,
            last.destination + last.length == copy.destination
        {
            copies[copies.count - 1] = RawCopy(source: last.source, destination: last.destination, length: last.length + copy.length)
        } else {
            copies.append(copy)
        }
    }

    /// Copies every range on `workers` threads, in pieces of at most 8 MiB, in the kernel
    /// where possible: filling new pages of the page cache is CPU-bound here, so two
    /// threads copy about twice as fast as one.
    static func run(
        _ copies: [RawCopy], from source: Int32, path sourcePath: String, to destination: Int32, path destinationPath: String,
        workers: Int
    ) throws {
        let piece: Int64 = 8 << 20
        var jobs: [[RawCopy]] = []
        var batch: [RawCopy] = []
        var batchBytes: Int64 = 0
        for copy in copies {
            var done: Int64 = 0
            while done < copy.length {
                let length = min(piece - batchBytes, copy.length - done)
                batch.append(RawCopy(source: copy.source + done, destination: copy.destination + done, length: length))
                batchBytes += length
                done += length
                if batchBytes >= piece {
                    jobs.append(batch)
                    batch = []
                    batchBytes = 0
                }
            }
        }
        if !batch.isEmpty { jobs.append(batch) }
        try WorkQueue<[RawCopy]>.run(
            initial: jobs, workers: workers, makeContext: { ChunkBuffer() },
            process: { pieces, buffer, _ in
                for copy in pieces {
                    try FileCopy.copyRange(
                        from: source, path: sourcePath, at: copy.source, to: destination, path: destinationPath,
                        at: copy.destination, length: copy.length, buffer: buffer)
                }
            })
    }
}
