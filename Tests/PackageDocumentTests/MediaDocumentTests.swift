import Foundation
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

@MainActor
@Suite("The streaming media writer")
struct MediaDocumentTests {
    func makeSession(payload: Data) async throws -> DocumentSession<MediaDocument> {
        let session = try await DocumentSession.create(contentType: .mpeg4Movie) { _, _ in MediaDocument() }
        session.durability = .none
        session.document.payload = payload
        return session
    }

    @Test("progress counts 1 MiB chunks to exactly 1, with byte counts equal at the end")
    func progress() async throws {
        let size = (8 << 20) + 12345
        var generator = SeededBytes(seed: 11)
        let payload = Data(generator.bytes(size))
        let session = try await makeSession(payload: payload)
        let directory = try TemporaryDirectory("media-progress")
        let path = directory.path + "/clip.mp4"
        try await session.save(to: fileURL(path))
        let progress = try #require(session.progress)
        #expect(progress.fractionCompleted == 1 && progress.isFinished)
        #expect(progress.summary(of: ProgressManager.Properties.TotalByteCount.self) == UInt64(size))
        #expect(progress.summary(of: ProgressManager.Properties.CompletedByteCount.self) == UInt64(size))
        #expect(try Files.read(path) == Array(payload))
        #expect(try visibleNames(in: directory.path) == ["clip.mp4"])

        // And back: the `@concurrent` reader.
        let reopened = try await DocumentSession.open(fileURL(path)) { _, _ in MediaDocument() }
        #expect(reopened.document.payload == payload)
        #expect(reopened.contentType == .mpeg4Movie)
    }

    @Test("a 1 GiB payload streams in a bounded amount of memory (measured in a child process)")
    nonisolated func gigabyte() async throws {
        // Off the main actor: waiting for the child process must not stall the other tests.
        let directory = try TemporaryDirectory("media-gib")
        let result = try await runProgramOffPool(builtExecutable("pkgdoc-demo"), ["media", String(1 << 30), directory.path + "/big.mp4"])
        #expect(result.status == 0, "\(result.error)")
        let report = try JSONDecoder().decode(DocumentDemos.MediaReport.self, from: Data(result.output.utf8))
        let beyond = report.peakResidentBytes - report.baselineResidentBytes
        print("1 GiB media save: peak RSS \(report.peakResidentBytes >> 20) MiB, \(beyond >> 20) MiB beyond the payload")
        #expect(report.baselineResidentBytes >= 1 << 30, "the payload is resident before the save")
        #expect(beyond <= 64 << 20)
        #expect(report.fractionCompleted == 1)
        #expect(report.totalByteCount == 1 << 30 && report.completedByteCount == report.totalByteCount)
        #expect(report.fileBytes == 1 << 30)
    }

    @Test("an export cancelled mid-write leaves no file at the destination")
    func cancelledExport() async throws {
        let directory = try TemporaryDirectory("media-cancel")
        try Files.write(directory.path + "/keep.mp4", "old")
        let gate = WriteGate()
        let session = try await DocumentSession.create(contentType: .data) { _, _ in GatedDocument(gate: gate) }
        session.durability = .none
        let destination = directory.path + "/export.bin"
        let export = Task { try await session.export(to: fileURL(destination), contentType: .data) }
        // The writer has written half its file when it signals; it then finishes normally,
        // without looking at cancellation, as the guide's writers do.
        #expect(await gate.started.wait(seconds: 60), "the writer never started")
        session.cancelSaving()
        gate.release.give()
        do {
            try await export.value
            Issue.record("a cancelled export completed")
        } catch let error as DocumentError {
            #expect(error.isCancellation && error.operation == .export)
            #expect(error.description.contains("cancelled"))
        }
        #expect(try visibleNames(in: directory.path) == ["keep.mp4"])
    }
}

/// Lets a test stop a writer halfway.
final class WriteGate: Sendable {
    let started = HandOff()
    let release = HandOff()
}

/// A flat document whose writer writes half its bytes, waits for the test, then the rest.
final class GatedDocument: Document {
    static let readableContentTypes: [UTType] = [.data]
    let gate: WriteGate
    init(gate: WriteGate) { self.gate = gate }

    struct Reader: DocumentReader {
        nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending Data {
            try Data(contentsOf: source)
        }
    }

    struct Writer: DocumentWriter {
        let gate: WriteGate
        nonisolated func write(
            content: sending Data, to destination: URL, previous: sending Data?, progress: consuming Subprogress
        ) async throws {
            let manager = progress.start(totalCount: 2)
            try content.prefix(content.count / 2).write(to: destination)
            manager.complete(count: 1)
            gate.started.give()
            await gate.release.wait(seconds: 120)
            let handle = try FileHandle(forWritingTo: destination)
            try handle.seekToEnd()
            try handle.write(contentsOf: content.suffix(from: content.count / 2))
            try handle.close()
            manager.complete(count: 1)
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }
    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer { Writer(gate: gate) }
    @MainActor func snapshot(contentType: UTType) async throws -> sending Data { Data(count: 1 << 20) }
    @MainActor func apply(snapshot: sending Data, previous: sending Data?) async throws {}
}
