import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Issue 12's "tests of the host": for each way a save can fail, on a new and on an opened
/// notebook (the guide's sample, which clears its pages' `isChanged` flags inside
/// `snapshot(contentType:)`), the failed save leaves the disk as it was and the document
/// reporting unsaved changes; the next successful save writes every edit (checked on disk,
/// and with `pkgtool verify`).
@MainActor
@Suite("The lossless host")
struct LosslessHostTests {
    enum Origin: String, CaseIterable, Sendable { case new, opened }

    enum Failure: String, CaseIterable, Sendable {
        /// The destination's folder is missing: found before the snapshot.
        case missingFolder
        /// The folder disappears after the snapshot, while the save waits for the lock.
        case missingFolderAfterSnapshot
        /// The destination's folder cannot be written: found before the snapshot.
        case readOnlyFolder
        case readOnlyFolderAfterSnapshot
        /// The package saved into cannot be written: found before the snapshot.
        case readOnlyPackage
        case readOnlyPackageAfterSnapshot
        /// `cancelSaving()` after the snapshot, before the writer runs.
        case cancelBeforeWriter
        /// `cancelSaving()` while the engine writes.
        case cancelDuringWriter
        /// ENOSPC from the second write of the save.
        case diskFull

        /// The cases that need a folder this process cannot write: as root, `chattr +i`.
        static let readOnly: [Failure] = [.readOnlyFolder, .readOnlyFolderAfterSnapshot, .readOnlyPackage, .readOnlyPackageAfterSnapshot]

        var afterSnapshot: Bool {
            switch self {
            case .missingFolder, .readOnlyFolder, .readOnlyPackage: return false
            default: return true
            }
        }
    }

    /// One case: a document with edits, where its failing save goes, and what must be on
    /// disk once a save succeeds.
    struct Setup {
        var session: DocumentSession<NotebookDocument>
        var destination: String
        var expected: NotebookOnDisk
        /// The content hash of the destination before (nil: nothing there).
        var before: ContentHash?
    }

    @Test(
        "a failed save keeps every edit for the next one",
        arguments: Failure.allCases.filter { !Failure.readOnly.contains($0) }, Origin.allCases)
    func failedSaveKeepsEdits(failure: Failure, origin: Origin) async throws {
        try await failedSaveKeepsEdits(failure, origin)
    }

    @Test(
        "a save failed by a folder it cannot write keeps every edit for the next one",
        Prerequisite.needs(!Prerequisite.isRoot || Prerequisite.canMakeImmutable, "chattr +i to make a folder read-only for root"),
        arguments: Failure.readOnly, Origin.allCases)
    func readOnlyFailedSaveKeepsEdits(failure: Failure, origin: Origin) async throws {
        try await failedSaveKeepsEdits(failure, origin)
    }

    func failedSaveKeepsEdits(_ failure: Failure, _ origin: Origin) async throws {
        let directory = try TemporaryDirectory("lossless-\(failure.rawValue)-\(origin.rawValue)")
        let setup = try await prepare(origin, failure: failure, in: directory)
        let session = setup.session
        let destinationFolder = (setup.destination as NSString).deletingLastPathComponent
        let namesBefore = [try Trees.names(directory.path), try Trees.names(destinationFolder)]

        // Arrange the failure.
        var undo: [() -> Void] = []
        defer { undo.reversed().forEach { $0() } }
        var held: PackageLock?
        var pause: PauseAtStep?
        var injector: (any IOFaultInjector)?
        // Whatever happens, nothing the test holds may keep the save waiting.
        defer {
            held?.release()
            pause?.released.give()
        }
        switch failure {
        case .missingFolder:
            try FileSystem.removeDirectory(destinationFolder)
        case .readOnlyFolder:
            guard let restore = try makeUnwritable([destinationFolder]) else { return }
            undo.append(restore)
        case .readOnlyPackage:
            guard let restore = try makeUnwritable(try directories(at: setup.destination)) else { return }
            undo.append(restore)
        case .missingFolderAfterSnapshot, .readOnlyFolderAfterSnapshot, .readOnlyPackageAfterSnapshot,
            .cancelBeforeWriter:
            held = try PackageLock.acquire(for: setup.destination, exclusive: true)
        case .cancelDuringWriter:
            pause = PauseAtStep(.write)
            injector = pause
        case .diskFull:
            injector = FailNth(.write, index: 2, error: .noSpace)
        }

        let saving = Task { @MainActor in
            try await IOFaultInjection.withInjector(injector) { try await self.runSave(setup, origin: origin) }
        }
        // Failures that strike after the snapshot: wait for it, then strike.
        if failure.afterSnapshot && failure != .diskFull {
            try await waitUntil { session.pendingSnapshotCount == 1 }
            switch failure {
            case .missingFolderAfterSnapshot:
                try FileSystem.removeDirectory(destinationFolder)
            case .readOnlyFolderAfterSnapshot:
                guard let restore = try makeUnwritable([destinationFolder]) else {
                    held?.release()
                    _ = await saving.result
                    return
                }
                undo.append(restore)
            case .readOnlyPackageAfterSnapshot:
                guard let restore = try makeUnwritable(try directories(at: setup.destination)) else {
                    held?.release()
                    _ = await saving.result
                    return
                }
                undo.append(restore)
            case .cancelBeforeWriter:
                session.cancelSaving()
            case .cancelDuringWriter:
                #expect(await pause?.reached.wait(seconds: 60) == true, "the save never reached its first write")
                session.cancelSaving()
                pause?.released.give()
            default:
                break
            }
            held?.release()
        }

        // The save fails, says why, and leaves the disk as it was.
        do {
            try await saving.value
            Issue.record("the save succeeded despite \(failure)")
        } catch let error as DocumentError {
            #expect(error.code == expectedCode(failure), "\(error)")
            #expect(error.isCancellation == (failure == .cancelBeforeWriter || failure == .cancelDuringWriter))
            #expect(!error.recoverySuggestion.isEmpty)
        }
        try await waitUntil { !session.isSaving }
        #expect(session.hasUnsavedChanges)
        #expect(session.lastError != nil)
        if failure.afterSnapshot {
            // The hard case: the document let go of its flags, the host holds the edits.
            #expect(session.pendingSnapshotCount == 1)
            #expect(session.document.pages.values.allSatisfy { !$0.isChanged })
        } else {
            #expect(session.pendingSnapshotCount == 0, "checked before the snapshot")
        }
        if failure != .missingFolder && failure != .missingFolderAfterSnapshot {
            let now = try FileSystem.statusIfExists(setup.destination) == nil ? nil : try Trees.contentHash(setup.destination)
            #expect(now == setup.before, "the destination changed")
            #expect(
                [try Trees.names(directory.path), try Trees.names(destinationFolder)] == namesBefore,
                "something was left beside it")
        }

        // Repair, and save again: every edit reaches the disk.
        undo.reversed().forEach { $0() }
        undo = []
        if failure == .missingFolder || failure == .missingFolderAfterSnapshot {
            try Files.makeDirectory(destinationFolder)
        }
        try await runSave(setup, origin: origin)
        #expect(!session.hasUnsavedChanges)
        #expect(session.pendingSnapshotCount == 0)
        #expect(try NotebookOnDisk(at: setup.destination) == setup.expected)
        try verifyPackage(setup.destination)
        #expect(session.configuration.fileURL?.path == setup.destination)
        #expect(try Trees.names(destinationFolder).allSatisfy { !$0.contains(".pkgtool-") }, "litter beside the package")
    }

    // MARK: The cases

    /// A notebook with edits, and where its save goes: a new notebook saved as
    /// `Sub/New.notebook` (over an existing notebook for the package cases); an opened one
    /// saved in place (package cases, cancellation, full disk) or as `Sub/Copy.notebook`
    /// (folder cases).
    func prepare(_ origin: Origin, failure: Failure, in directory: TemporaryDirectory) async throws -> Setup {
        let sub = directory.path + "/Sub"
        try Files.makeDirectory(sub)
        let packageCase = failure == .readOnlyPackage || failure == .readOnlyPackageAfterSnapshot
        let folderCase = [.missingFolder, .missingFolderAfterSnapshot, .readOnlyFolder, .readOnlyFolderAfterSnapshot]
            .contains(failure)
        switch origin {
        case .new:
            let destination = sub + "/New.notebook"
            if packageCase { _ = try await makeNotebook(at: destination, pageCount: 2) }
            let session = try await DocumentSession.create { configuration, _ in
                NotebookDocument(configuration: configuration)
            }
            session.durability = .none
            let ids = ["one", "two", "three"].map { session.document.addPage($0) }
            session.updateChangeCount(.done)
            return Setup(
                session: session, destination: destination,
                expected: NotebookOnDisk(order: ids, pages: Dictionary(uniqueKeysWithValues: zip(ids, ["one", "two", "three"]))),
                before: packageCase ? try Trees.contentHash(destination) : nil)
        case .opened:
            let path = directory.path + "/Trip.notebook"
            let ids = try await makeNotebook(at: path, pageCount: 5)
            let session = try await openNotebook(path)
            _ = try session.document.loadPage(ids[1])
            session.document.edit(ids[1], text: "edited")
            let added = session.document.addPage("added")
            session.document.removePage(ids[3])
            session.updateChangeCount(.done)
            let order = [ids[0], ids[1], ids[2], ids[4], added]
            let texts = ["page 0", "edited", "page 2", "page 4", "added"]
            let destination = folderCase ? sub + "/Copy.notebook" : path
            return Setup(
                session: session, destination: destination,
                expected: NotebookOnDisk(order: order, pages: Dictionary(uniqueKeysWithValues: zip(order, texts))),
                before: folderCase ? nil : try Trees.contentHash(path))
        }
    }

    /// The save under test: in place when the destination is the document's file, else a
    /// save as.
    func runSave(_ setup: Setup, origin: Origin) async throws {
        if setup.session.configuration.fileURL?.path == setup.destination {
            try await setup.session.save()
        } else {
            try await setup.session.save(to: fileURL(setup.destination))
        }
    }

    func expectedCode(_ failure: Failure) -> DocumentError.Code {
        switch failure {
        case .missingFolder: return .folderMissing
        case .missingFolderAfterSnapshot: return .notFound
        case .readOnlyFolder, .readOnlyPackage, .readOnlyFolderAfterSnapshot, .readOnlyPackageAfterSnapshot:
            return .notWritable
        case .cancelBeforeWriter, .cancelDuringWriter: return .cancelled
        case .diskFull: return .diskFull
        }
    }
}
