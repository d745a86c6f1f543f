import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Issue 12's "cancellation that cancels": `cancelSaving()` part way through a 256 MiB
/// package save. Measured in a child process (`pkgdoc-demo cancel-package`), whose threads
/// no other test can hold up: the bound is the host's and the engine's reaction, which a
/// busy test process would blur. One case at a time, so that the cases do not compete with
/// one another for the two cores.
@Suite("Cancelling a large package save", .serialized)
struct CancellationTests {
    static let payloadBytes = 256 << 20

    /// The cancellation comes back within 100 ms of the request, leaves the package as it
    /// was, keeps the edits pending, and the next save writes them — cancelled 10 ms and
    /// 60 ms into the save, and while the engine writes its 1 MiB chunks. `.none`
    /// durability (no fsync): the bound is about the checks, not the disk's flush.
    @Test("cancelled 10–100 ms into a 256 MiB package save, the error returns within 100 ms", arguments: ["10", "60", "writing"])
    func cancelLargeSave(point: String) async throws {
        let directory = try TemporaryDirectory("cancel-256")
        let path = directory.path + "/Big.clip"
        let result = try await runProgramOffPool(builtExecutable("pkgdoc-demo"), ["cancel-package", String(Self.payloadBytes), path, point])
        #expect(result.status == 0, "\(result.error)")
        let report = try JSONDecoder().decode(DocumentDemos.CancellationReport.self, from: Data(result.output.utf8))
        print(
            "256 MiB package save cancelled at \(point): \(String(format: "%.1f", report.cancelledAfterMilliseconds)) ms into it, "
                + "\(report.bytesWrittenBeforeCancel >> 20) MiB written; error after "
                + "\(String(format: "%.2f", report.latencyMilliseconds)) ms, save ended after "
                + "\(String(format: "%.1f", report.stoppedAfterMilliseconds)) ms; next save "
                + "\(String(format: "%.0f", report.nextSaveMilliseconds)) ms")
        #expect(report.isCancellation, "\(report.error)")
        #expect(report.latencyMilliseconds < 100, "the cancellation took \(report.latencyMilliseconds) ms to come back")
        if point != "writing" {
            #expect(report.cancelledAfterMilliseconds >= 10 && report.cancelledAfterMilliseconds < 150)
        } else {
            #expect(report.bytesWrittenBeforeCancel > 0, "cancelled while the engine wrote")
            #expect(report.stoppedAfterMilliseconds < 100, "the engine stops at its next 1 MiB chunk")
        }
        #expect(report.packageUnchanged)
        // Cancelled after the snapshot, the host keeps it (the document cleared its flags);
        // before it, the edits are still the document's own. Unsaved either way.
        #expect(report.hasUnsavedChangesAfterCancel)
        #expect((report.pendingSnapshotsAfterCancel == 1) == report.flagsClearedByDocument)
        #expect(report.pendingSnapshotsAfterCancel <= 1)
        if point == "writing" { #expect(report.pendingSnapshotsAfterCancel == 1) }
        #expect(report.editsWrittenByNextSave)
        #expect(!report.hasUnsavedChangesAfterNextSave)
        // What is left: the package, complete and matching its manifest, and nothing beside it.
        #expect(try Trees.names(directory.path) == ["Big.clip"])
        #expect(try FileSystem.status(path + "/clip.bin").size == Int64(Self.payloadBytes))
        #expect(try text(at: path + "/notes.txt") == "edited")
        try verifyPackage(path)
    }
}
