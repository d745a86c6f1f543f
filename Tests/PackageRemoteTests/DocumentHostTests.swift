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
        // The edited page and the notebook's metadata: one small pack.
        #expect(second.packsUploaded == 1 && second.blobsUploaded <= 2)

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

    @Test func cancellingTheTaskCancelsThePushAndThePull() async throws {
        let fixture = try RemoteFixture("dochost-cancel", prefix: "")
        let source = try fixture.makePackage("source", pages: 4, mediaSize: 8 << 20)
        var slow = fixture.options()
        slow.configuration.transport.maximumBytesPerSecond = 1 << 20
        let push = Task { try await PackageRemote.push(source, to: fixture.location, options: slow) }
        try await Task.sleep(for: .milliseconds(300))
        push.cancel()
        await #expect { _ = try await push.value } throws: { ($0 as? RemoteError)?.kind == .cancelled }
        // Nothing was recorded; the next push finishes the job.
        let pushed = try await PackageRemote.push(source, to: fixture.location, options: fixture.options())
        #expect(pushed.version.sequence == 1)

        var slowPull = fixture.options(device: "b")
        slowPull.configuration.transport.maximumBytesPerSecond = 1 << 20
        let destination = fixture.path("copy")
        let pull = Task { try await PackageRemote.pull(fixture.location, to: destination, options: slowPull) }
        try await Task.sleep(for: .milliseconds(300))
        pull.cancel()
        await #expect { _ = try await pull.value } throws: { ($0 as? RemoteError)?.kind == .cancelled }
        #expect(!FileManager.default.fileExists(atPath: destination))
        let pulled = try await PackageRemote.pull(fixture.location, to: destination, options: fixture.options(device: "b"))
        #expect(try RemoteFixture.rootHash(destination) == pulled.version.rootHash)
    }
}
