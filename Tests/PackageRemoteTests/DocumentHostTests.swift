import Foundation
import PackageCore
import PackageDocument
import PackageTestSupport
import Testing

@testable import PackageDocumentExamples
@testable import PackageRemote

/// The document host pushes after a save, through the async API: what an app does.
@Suite("Sync from a document app") @MainActor struct DocumentHostTests {
    /// Saves the session, then pushes its package (the guide's pattern).
    func saveThenPush(_ session: DocumentSession<NotebookDocument>, to url: URL?, fixture: RemoteFixture) async throws
        -> PushResult
    {
        if let url { try await session.save(to: url) } else { try await session.save() }
        let path = try #require(session.configuration.fileURL).path
        return try await PackageRemote.push(path, to: fixture.location, options: fixture.options())
    }

    @Test func aNotebookIsPushedAfterEachSaveAndPulledElsewhere() async throws {
        let fixture = try RemoteFixture("dochost")
        let session = try await DocumentSession.create { configuration, _ in NotebookDocument(configuration: configuration) }
        session.durability = .none
        let pages = (0..<40).map { session.document.addPage("page \($0)") }
        let first = try await saveThenPush(session, to: URL(fileURLWithPath: fixture.path("Trip.notebook")), fixture: fixture)
        #expect(first.createdVersion && first.version.sequence == 1)

        session.document.edit(pages[7], text: "page 7, edited on the train")
        session.updateChangeCount(.done)
        let second = try await saveThenPush(session, to: nil, fixture: fixture)
        #expect(second.version.sequence == 2 && second.version.parent == first.version.id)
        // The edited page and the notebook's metadata (each reader thread may seal its own pack).
        #expect(second.blobsUploaded <= 2 && second.packsUploaded <= 2 && second.bytesUploaded < 16 << 10, "\(second)")

        let copy = fixture.path("Copy.notebook")
        let pulled = try await PackageRemote.pull(fixture.location, to: copy, options: fixture.options(device: "b"))
        #expect(pulled.version.id == second.version.id)
        #expect(try RemoteFixture.rootHash(copy) == (try RemoteFixture.rootHash(fixture.path("Trip.notebook"))))
        let reopened = try await DocumentSession.open(URL(fileURLWithPath: copy)) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        #expect(try reopened.document.loadPage(pages[7]).text == "page 7, edited on the train")
        #expect(try await PackageRemote.log(fixture.location, options: fixture.options()).map(\.sequence) == [2, 1])
    }
}

/// Issue 26: an app on two devices saves its document, then syncs instead of pushing — a
/// push after a save fails once the other device moved the remote on; a sync merges.
@Suite("Sync after a save, on two devices") @MainActor struct DocumentHostSyncTests {
    func open(_ path: String) async throws -> DocumentSession<NotebookDocument> {
        let session = try await DocumentSession.open(URL(fileURLWithPath: path)) { configuration, _ in
            NotebookDocument(configuration: configuration)
        }
        session.durability = .none
        return session
    }

    @Test func twoDevicesSaveAndSyncTheirEditsTogether() async throws {
        let fixture = try RemoteFixture("dochost-sync")
        let laptopPath = fixture.path("laptop/Trip.notebook")
        try FileManager.default.createDirectory(atPath: fixture.path("laptop"), withIntermediateDirectories: true)
        let maker = try await DocumentSession.create { configuration, _ in NotebookDocument(configuration: configuration) }
        maker.durability = .none
        let pages = (0..<6).map { maker.document.addPage("page \($0)") }
        try await maker.save(to: URL(fileURLWithPath: laptopPath))
        _ = try await PackageRemote.sync(laptopPath, with: fixture.location, options: fixture.options(), durability: .none)
        let desktopPath = fixture.path("desktop")
        _ = try await PackageRemote.pull(fixture.location, to: desktopPath, options: fixture.options(device: "b"))

        let laptop = try await open(laptopPath)
        let desktop = try await open(desktopPath)
        laptop.document.edit(pages[1], text: "one, on the laptop")
        laptop.updateChangeCount(.done)
        try await laptop.save()
        _ = try await PackageRemote.sync(laptopPath, with: nil, options: fixture.options(), durability: .none)

        desktop.document.edit(pages[4], text: "four, on the desktop")
        desktop.updateChangeCount(.done)
        try await desktop.save()
        // A push after the save is refused: the remote moved on.
        await #expect(throws: RemoteError.self) {
            _ = try await PackageRemote.push(desktopPath, to: fixture.location, options: fixture.options(device: "b"))
        }
        let merged = try await PackageRemote.sync(desktopPath, with: nil, options: fixture.options(device: "b"), durability: .none)
        #expect(merged.action == .merged && merged.newConflicts.isEmpty)
        _ = try await PackageRemote.sync(laptopPath, with: nil, options: fixture.options(), durability: .none)

        for path in [laptopPath, desktopPath] {
            let reopened = try await open(path)
            #expect(try reopened.document.loadPage(pages[1]).text == "one, on the laptop")
            #expect(try reopened.document.loadPage(pages[4]).text == "four, on the desktop")
        }
        // The open laptop session saves again after the sync wrote into its package: the
        // desktop's page stays (the host merges what the sync saved).
        laptop.document.edit(pages[2], text: "two, on the laptop")
        laptop.updateChangeCount(.done)
        try await laptop.save()
        #expect(laptop.lastSaveConflicts.isEmpty)
        let final = try await open(laptopPath)
        #expect(try final.document.loadPage(pages[4]).text == "four, on the desktop")
        #expect(try final.document.loadPage(pages[2]).text == "two, on the laptop")
    }
}

/// The async calls end with `cancelled` when their task is cancelled, and leave nothing half
/// done. Not on the main actor: under a full test run, other suites keep it (and Swift's
/// pool) busy for seconds, so the cancel comes from a thread of its own, once the transfer
/// is under way.
@Suite("Sync cancelled with its task") struct TaskCancellationTests {
    /// Cancels `task` from a new thread as soon as `started` says so (polled every millisecond).
    /// The deadline only guards against a hang: under a full run the task may wait minutes for
    /// a thread of Swift's pool (long synchronous tests hold them), and a cancel that came
    /// before the transfer began would test nothing.
    static func cancel<Value: Sendable>(_ task: Task<Value, any Error>, when started: @escaping @Sendable () -> Bool) {
        Thread.detachNewThread {
            let deadline = Date().addingTimeInterval(900)
            while !started() && Date() < deadline { usleep(1000) }
            task.cancel()
        }
    }

    @Test func cancellingTheTaskCancelsThePushAndThePull() async throws {
        let fixture = try RemoteFixture("task-cancel", prefix: "")
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 8 << 20)
        // 1 MiB packs at 512 KiB/s, 4 at a time: the push takes 4 s or more; it is
        // cancelled once the first pack has arrived (recorded in the cache, after about 2 s).
        var slow = fixture.options(packSize: 1 << 20)
        slow.configuration.transport.maximumBytesPerSecond = 512 << 10
        let pushProgress = ProgressManager(totalCount: 1)
        let location = fixture.location
        let push = Task { [slow] in
            try await PackageRemote.push(source, to: location, options: slow, progress: pushProgress.subprogress(assigningCount: 1))
        }
        let cache = RemoteStore(location: location, options: slow).cache
        Self.cancel(push) {
            pushProgress.summary(of: ProgressManager.Properties.CompletedByteCount.self) > 0 && !cache.pendingPacks().isEmpty
        }
        await #expect { _ = try await push.value } throws: { ($0 as? RemoteError)?.kind == .cancelled }
        // Nothing was recorded; the next push finishes the job.
        let pushed = try await PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(pushed.version.sequence == 1 && pushed.packsResumed > 0)

        // The pull: a blob's arrival moves its progress.
        var slowPull = fixture.options(device: "b")
        slowPull.configuration.transport.maximumBytesPerSecond = 512 << 10
        let destination = fixture.path("copy")
        let pullProgress = ProgressManager(totalCount: 1)
        let pull = Task { [slowPull] in
            try await PackageRemote.pull(
                location, to: destination, options: slowPull, progress: pullProgress.subprogress(assigningCount: 1))
        }
        Self.cancel(pull) { pullProgress.summary(of: ProgressManager.Properties.CompletedByteCount.self) > 0 }
        await #expect { _ = try await pull.value } throws: { ($0 as? RemoteError)?.kind == .cancelled }
        #expect(!FileManager.default.fileExists(atPath: destination))
        let pulled = try await PackageRemote.pull(fixture.location, to: destination, options: fixture.options(device: "b"))
        #expect(try RemoteFixture.rootHash(destination) == pulled.version.rootHash)
        #expect(pulled.blobsResumed > 0)
    }
}
