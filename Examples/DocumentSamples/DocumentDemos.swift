import Foundation
import Glibc
import Observation
import PackageCore
import PackageDocument

/// Runs the samples in ways tests measure from outside: memory while streaming a large
/// payload, and saves from several processes at once. Used by the `pkgdoc-demo` tool.
public enum DocumentDemos {
    // MARK: Streaming a large payload

    /// What streaming a media payload through the guide's writer cost.
    public struct MediaReport: Codable, Sendable {
        public var payloadBytes: Int
        /// Resident memory with the payload in memory, before the save.
        public var baselineResidentBytes: Int
        /// The peak resident memory during the save.
        public var peakResidentBytes: Int
        public var fractionCompleted: Double
        public var totalByteCount: UInt64
        public var completedByteCount: UInt64
        public var fileBytes: Int64
    }

    /// Saves a `MediaDocument` holding `payloadBytes` of data (every page touched, so the
    /// payload is resident) to `path`, and measures the peak resident memory beyond it.
    @MainActor
    public static func streamMedia(payloadBytes: Int, to path: String) async throws -> MediaReport {
        let session = try await DocumentSession.create(contentType: .mpeg4Movie) { _, _ in MediaDocument() }
        session.durability = .none
        var payload = Data(count: payloadBytes)
        payload.withUnsafeMutableBytes { bytes in
            // One byte per page is enough to make every page resident.
            var offset = 0
            while offset < bytes.count {
                bytes[offset] = UInt8(truncatingIfNeeded: offset >> 12)
                offset += 4096
            }
        }
        session.document.payload = payload
        payload = Data()
        ResidentMemory.resetPeak()
        let baseline = ResidentMemory.current()
        try await session.save(to: URL(fileURLWithPath: path))
        let peak = ResidentMemory.peak()
        let progress = try requireProgress(session.progress)
        return MediaReport(
            payloadBytes: payloadBytes, baselineResidentBytes: baseline, peakResidentBytes: peak,
            fractionCompleted: progress.fractionCompleted,
            totalByteCount: progress.summary(of: ProgressManager.Properties.TotalByteCount.self),
            completedByteCount: progress.summary(of: ProgressManager.Properties.CompletedByteCount.self),
            fileBytes: try FileSystem.status(path).size)
    }

    // MARK: Cancelling a large package save

    /// What cancelling a package save part way through did.
    public struct CancellationReport: Codable, Sendable {
        public var payloadBytes: Int
        /// How long the first save (the whole package, written fresh) took.
        public var firstSaveMilliseconds: Double
        /// When `cancelSaving()` was called, counted from the start of the save.
        public var cancelledAfterMilliseconds: Double
        /// Bytes the engine had written when it was called (0: it was still preparing).
        public var bytesWrittenBeforeCancel: UInt64
        /// From `cancelSaving()` to the save's error reaching its caller.
        public var latencyMilliseconds: Double
        /// From `cancelSaving()` to the save having ended in the background (its read-only
        /// work, when the cancellation came before it wrote).
        public var stoppedAfterMilliseconds: Double
        public var isCancellation: Bool
        public var error: String
        /// The package's root hash after the cancelled save equals the one before it.
        public var packageUnchanged: Bool
        public var pendingSnapshotsAfterCancel: Int
        public var hasUnsavedChangesAfterCancel: Bool
        /// The document had let go of its change flags (it clears them in `snapshot`).
        public var flagsClearedByDocument: Bool
        public var nextSaveMilliseconds: Double
        /// The next save wrote the cancelled edits: the new clip and note are on disk.
        public var editsWrittenByNextSave: Bool
        public var hasUnsavedChangesAfterNextSave: Bool
    }

    /// When `cancelPackageSave` cancels.
    public enum CancelPoint: Sendable {
        /// This long into the save.
        case after(Duration)
        /// As soon as the engine has written something.
        case whileWriting
    }

    /// Saves a `ClipPackageDocument` with a clip of `payloadBytes` to `path`, replaces the
    /// clip and the note, starts a save, cancels it at `point`, and measures how long the
    /// cancellation takes to come back and the save to end; then saves again and checks
    /// that the edits reached the disk. `.none` durability: what is measured is the host's
    /// and the engine's reaction (a check at every 1 MiB chunk), not the disk's flush.
    @MainActor
    public static func cancelPackageSave(
        payloadBytes: Int, to path: String, at point: CancelPoint
    ) async throws -> CancellationReport {
        let clock = ContinuousClock()
        let session = try await DocumentSession.create { _, _ in ClipPackageDocument() }
        session.durability = .none
        session.document.setClip(patternedData(count: payloadBytes, variant: 0))
        session.document.setNotes("first")
        session.updateChangeCount(.done)
        var started = clock.now
        try await session.save(to: URL(fileURLWithPath: path))
        let firstSave = started.duration(to: clock.now)
        let hashBefore = try packageHash(path)

        let edited = patternedData(count: payloadBytes, variant: 1)
        session.document.setClip(edited)
        session.document.setNotes("edited")
        session.updateChangeCount(.done)
        started = clock.now
        let saving = Task { @MainActor in try await session.save() }
        let progressBefore = session.progress
        var written: UInt64 = 0
        while true {
            let elapsed = started.duration(to: clock.now)
            let progress = session.progress
            written =
                progress === progressBefore
                ? 0 : progress?.summary(of: ProgressManager.Properties.CompletedByteCount.self) ?? 0
            if case .after(let delay) = point, elapsed >= delay { break }
            if case .whileWriting = point, written > 0 || elapsed >= .seconds(30) { break }
            try await Task.sleep(for: .microseconds(500))
        }
        let requested = clock.now
        session.cancelSaving()
        let result = await saving.result
        let returned = clock.now
        while session.isSaving { try await Task.sleep(for: .microseconds(500)) }
        let stopped = clock.now
        var report = CancellationReport(
            payloadBytes: payloadBytes, firstSaveMilliseconds: milliseconds(firstSave),
            cancelledAfterMilliseconds: milliseconds(started.duration(to: requested)), bytesWrittenBeforeCancel: written,
            latencyMilliseconds: milliseconds(requested.duration(to: returned)),
            stoppedAfterMilliseconds: milliseconds(requested.duration(to: stopped)), isCancellation: false, error: "",
            packageUnchanged: try packageHash(path) == hashBefore, pendingSnapshotsAfterCancel: session.pendingSnapshotCount,
            hasUnsavedChangesAfterCancel: session.hasUnsavedChanges,
            flagsClearedByDocument: !session.document.clipChanged && !session.document.notesChanged,
            nextSaveMilliseconds: 0, editsWrittenByNextSave: false, hasUnsavedChangesAfterNextSave: true)
        if case .failure(let error) = result {
            report.error = "\(error)"
            report.isCancellation = (error as? DocumentError)?.isCancellation ?? false
        }
        let again = clock.now
        try await session.save()
        report.nextSaveMilliseconds = milliseconds(again.duration(to: clock.now))
        let clipOnDisk = try Data(contentsOf: URL(fileURLWithPath: path + "/clip.bin"))
        let notesOnDisk = try String(contentsOfFile: path + "/notes.txt", encoding: .utf8)
        report.editsWrittenByNextSave = clipOnDisk == edited && notesOnDisk == "edited"
        report.hasUnsavedChangesAfterNextSave = session.hasUnsavedChanges
        return report
    }

    /// `count` bytes: a 1 MiB pseudo-random block repeated, each copy stamped with its index
    /// and `variant` (fast to make, and no two MiB alike).
    static func patternedData(count: Int, variant: UInt64) -> Data {
        var data = Data(count: count)
        let block = 1 << 20
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* (variant + 1)
        var pattern = [UInt8](repeating: 0, count: block)
        for index in stride(from: 0, to: block, by: 8) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            withUnsafeBytes(of: state) { bytes in
                for offset in 0..<8 { pattern[index + offset] = bytes[offset] }
            }
        }
        data.withUnsafeMutableBytes { bytes in
            var offset = 0
            var copy: UInt64 = 0
            while offset < count {
                let length = min(block, count - offset)
                pattern.withUnsafeBytes { source in
                    bytes.baseAddress!.advanced(by: offset).copyMemory(from: source.baseAddress!, byteCount: length)
                }
                var stamp = (copy << 8) | variant
                withUnsafeBytes(of: &stamp) { stampBytes in
                    for index in 0..<min(8, length) { bytes[offset + index] = stampBytes[index] }
                }
                offset += length
                copy += 1
            }
        }
        return data
    }

    static func packageHash(_ path: String) throws -> ContentHash {
        try TreeScanner(excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(path).snapshot.rootHash
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
    }

    // MARK: Several processes saving one document

    /// Saves the flat counter document at `path` `rounds` times, each save holding the
    /// write for `holdMilliseconds` and logging when its write ran (monotonic ns) to `log`.
    @MainActor
    public static func counterSaves(path: String, rounds: Int, label: String, holdMilliseconds: Int, log: String)
        async throws
    {
        let session = try await DocumentSession.open(URL(fileURLWithPath: path)) { _, _ in
            CounterDocument(label: label, log: log, holdMilliseconds: holdMilliseconds)
        }
        session.durability = .none
        for round in 1...rounds {
            session.document.value = "\(label) \(round)"
            session.updateChangeCount(.done)
            try await session.save()
        }
    }

    /// Opens the notebook at `path` and saves it `rounds` times, each time with its first
    /// page set to "`label` `round`".
    @MainActor
    public static func notebookSaves(path: String, rounds: Int, label: String) async throws {
        let session = try await DocumentSession.open(URL(fileURLWithPath: path)) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        guard let first = session.document.metadata.pageOrder.first else { return }
        for round in 1...rounds {
            session.document.edit(first, text: "\(label) \(round)")
            session.updateChangeCount(.done)
            try await session.save()
        }
    }

    /// Makes a notebook of `pages` pages at `path`.
    @MainActor
    public static func makeNotebook(at path: String, pages: Int) async throws {
        let session = try await DocumentSession.create { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        for index in 0..<pages { _ = session.document.addPage("page \(index)") }
        try await session.save(to: URL(fileURLWithPath: path))
    }

    /// The first page's text of the notebook at `path`.
    @MainActor
    public static func notebookFirstPage(at path: String) async throws -> String {
        let session = try await DocumentSession.open(URL(fileURLWithPath: path)) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        guard let first = session.document.metadata.pageOrder.first else { return "" }
        return try session.document.loadPage(first).text
    }

    static func requireProgress(_ progress: ProgressManager?) throws -> ProgressManager {
        guard let progress else { throw CocoaError(.fileWriteUnknown) }
        return progress
    }
}

/// A one-line flat document whose writer holds the write a while and logs when it ran: two
/// processes saving it show whether their writes ever overlapped.
@Observable
final class CounterDocument: Document {
    static let readableContentTypes: [UTType] = [.plainText]

    var value = ""
    let label: String
    let log: String
    let holdMilliseconds: Int

    init(label: String, log: String, holdMilliseconds: Int) {
        self.label = label
        self.log = log
        self.holdMilliseconds = holdMilliseconds
    }

    struct Reader: DocumentReader {
        nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending String {
            String(decoding: try Data(contentsOf: source), as: UTF8.self)
        }
    }

    struct Writer: DocumentWriter {
        let log: String
        let holdMilliseconds: Int

        nonisolated func write(
            content: sending String, to destination: URL, previous: sending String?, progress: consuming Subprogress
        ) async throws {
            let start = ResidentMemory.monotonicNanoseconds()
            try Data(content.utf8).write(to: destination)
            usleep(UInt32(holdMilliseconds * 1000))
            let end = ResidentMemory.monotonicNanoseconds()
            let line = "\(start) \(end)\n"
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            defer { try? handle.close() }
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(line.utf8))
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer {
        Writer(log: log, holdMilliseconds: holdMilliseconds)
    }

    @MainActor func snapshot(contentType: UTType) async throws -> sending String { value }
    @MainActor func apply(snapshot: sending String, previous: sending String?) async throws { value = snapshot }
}

/// Resident memory of this process, from /proc/self/status.
enum ResidentMemory {
    static func current() -> Int { field("VmRSS:") }
    static func peak() -> Int { field("VmHWM:") }

    /// Resets the peak to the current resident size (Linux: "5" to /proc/self/clear_refs).
    static func resetPeak() {
        do {
            let file = try FileDescriptor.open("/proc/self/clear_refs", access: .writeOnly)
            try file.write(contentsOf: Array("5".utf8))
        } catch {
            // Without the reset the peak includes the process's earlier life: still an upper bound.
        }
    }

    static func monotonicNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    private static func field(_ name: String) -> Int {
        // /proc files report a size of 0: read until the end rather than by size.
        var bytes = [UInt8](repeating: 0, count: 16 * 1024)
        let count: Int
        do {
            let file = try FileDescriptor.open("/proc/self/status")
            count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0) }
        } catch {
            return 0
        }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "0"
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }
}
