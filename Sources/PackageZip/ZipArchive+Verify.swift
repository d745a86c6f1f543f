import PackageCore
import Synchronization

extension ZipArchive {
    /// What a verification read.
    public struct VerifyReport: Sendable {
        /// Entries in the archive.
        public var entries: Int
        /// Uncompressed bytes checked.
        public var bytes: Int64
        /// Entries whose XXH3-128 content hash was checked as well as their CRC-32.
        public var hashesChecked: Int
    }

    /// Reads every entry's data and checks sizes, CRC-32 and our content hash (the
    /// structure was checked by `open`). Entries are read in parallel.
    ///
    /// - Parameters:
    ///   - workers: threads that inflate and check, every core by default.
    ///   - progress: called from worker threads with the uncompressed bytes of each piece
    ///     checked (at most 1 MiB: a large entry moves a progress line as it is read).
    /// - Throws: `ZipError` naming the first bad entry found.
    /// - Complexity: reads all compressed data once, in 1 MiB chunks, on `workers` threads;
    ///   memory is about 2 MiB per worker.
    @discardableResult
    public func verify(
        workers: Int = ProcessInfoCores.active, progress: (@Sendable (Int64) -> Void)? = nil
    ) throws -> VerifyReport {
        let bytes = Atomic<Int64>(0)
        let hashed = Atomic<Int>(0)
        try forEachEntryInParallel(workers: workers, skipDirectories: true) { entry, reader in
            try reader.read(entry, file: self.file, archivePath: self.path) { chunk in progress?(Int64(chunk.count)) }
            bytes.add(entry.uncompressedSize, ordering: .relaxed)
            if entry.contentHash != nil { hashed.add(1, ordering: .relaxed) }
        }
        return VerifyReport(
            entries: entries.count, bytes: bytes.load(ordering: .relaxed), hashesChecked: hashed.load(ordering: .relaxed))
    }

    /// Runs `body` for every entry on `workers` threads, each with its own `EntryReader`.
    /// Entries go out in batches of about 8 MiB or 64 entries, largest first.
    func forEachEntryInParallel(
        workers: Int, skipDirectories: Bool, _ body: @escaping @Sendable (ZipEntry, EntryReader) throws -> Void
    ) throws {
        var order = entries.indices.filter { !(skipDirectories && entries[$0].kind == .directory) }
        // Large entries first so that no single big one is left running alone at the end.
        order.sort { entries[$0].compressedSize > entries[$1].compressedSize }
        var batches: [[Int]] = []
        var batch: [Int] = []
        var batchBytes: Int64 = 0
        for index in order {
            batch.append(index)
            batchBytes += entries[index].compressedSize
            if batch.count >= 64 || batchBytes >= 8 << 20 {
                batches.append(batch)
                batch = []
                batchBytes = 0
            }
        }
        if !batch.isEmpty { batches.append(batch) }
        let all = entries
        try WorkQueue<[Int]>.run(
            initial: batches, workers: workers, makeContext: { EntryReader() },
            process: { indices, reader, _ in
                for index in indices { try body(all[index], reader) }
            })
    }

    /// Calls `body` with an entry's uncompressed bytes, chunk by chunk, after checking them
    /// as `verify` does (the last chunk arrives before the CRC is checked: a caller that
    /// must not act on bad data collects first).
    ///
    /// - Complexity: one `pread` per MiB of the entry's compressed data.
    public func withContents(of entry: ZipEntry, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let reader = EntryReader()
        try reader.read(entry, file: file, archivePath: path, sink: body)
    }

    /// An entry's uncompressed bytes, checked. For small entries: the whole entry is held in memory.
    ///
    /// - Complexity: as `withContents(of:_:)`; memory: the entry's uncompressed size.
    public func contents(of entry: ZipEntry) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(min(entry.uncompressedSize, 64 << 20)))
        try withContents(of: entry) { bytes.append(contentsOf: $0) }
        return bytes
    }
}
