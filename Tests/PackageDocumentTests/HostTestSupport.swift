import Foundation
import Glibc
import PackageCore
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageDocument
@testable import PackageDocumentExamples

/// Makes the directories `paths` impossible for this process to write into, the way that
/// works here: `chmod 0555` for a user; as root, whom permission bits do not stop, the
/// immutable flag (`chattr +i`). Returns the undo, or nil, recording a failure, when neither
/// works (a file system without the flag, no `chattr`): the tests that call it are skipped
/// beforehand where this machine cannot (`Prerequisite.canMakeImmutable`).
func makeUnwritable(_ paths: [String]) throws -> (() -> Void)? {
    if getuid() != 0 {
        for path in paths { try FileSystem.setPermissions(path, 0o555) }
        return { for path in paths { try? FileSystem.setPermissions(path, 0o755) } }
    }
    guard let chattr = which("chattr"), try runProgram(chattr, ["+i"] + paths).status == 0 else {
        Issue.record("no way to make a folder read-only for root here (chattr +i failed or is missing)")
        return nil
    }
    return { _ = try? runProgram(chattr, ["-i"] + paths) }
}

/// Every directory at or below `path` (a package and its folders, `.pkgtool` included).
func directories(at path: String) throws -> [String] {
    var found = [path]
    for name in try DirectoryListing.names(in: FileDescriptor.openDirectory(path)) {
        let child = path + "/" + name
        if try FileSystem.status(child).kind == .directory { found += try directories(at: child) }
    }
    return found
}

/// Pauses the first I/O step of a kind (on the thread doing it) until the test releases
/// it — or 2 minutes have passed, so that a failing test never leaves a save hanging.
/// `reached` is given when the step is reached; the test gives `released` to let it run.
final class PauseAtStep: IOFaultInjector {
    let step: IOStep
    let reached = HandOff()
    let released = HandOff()
    private let taken = Atomic<Bool>(false)

    init(_ step: IOStep) { self.step = step }

    func fault(before step: IOStep, path: String) -> InjectedFault? {
        if step == self.step, !taken.exchange(true, ordering: .acquiringAndReleasing) {
            reached.give()
            released.wait(seconds: 120)
        }
        return nil
    }
}

/// Waits (polling) until `condition` holds, at most `seconds`.
///
/// Polls by yielding the main actor rather than sleeping: waking from `Task.sleep` needs a
/// thread of Swift's cooperative pool, and saves paused by a test (`PauseAtStep`) can hold
/// every one of them on a 2-core machine until the test, waiting here, releases them.
@MainActor
func waitUntil(seconds: Double = 20, _ condition: @MainActor () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else {
            Issue.record("timed out waiting")
            return
        }
        await Task.yield()
        usleep(200)
    }
}

/// A notebook as it is on disk: its page order and each page's text.
struct NotebookOnDisk: Equatable, CustomStringConvertible {
    var order: [UUID]
    var pages: [UUID: String]

    init(order: [UUID], pages: [UUID: String]) {
        self.order = order
        self.pages = pages
    }

    /// Reads the notebook at `path`: `metadata.json` and every file of `pages/`.
    init(at path: String) throws {
        let metadata = try JSONDecoder().decode(NotebookMetadata.self, from: Data(Files.read(path + "/metadata.json")))
        order = metadata.pageOrder
        pages = [:]
        for name in try visibleNames(in: path + "/pages") {
            guard let id = UUID(uuidString: String(name.dropLast(4))) else { continue }
            pages[id] = try text(at: path + "/pages/" + name)
        }
    }

    var description: String { "order \(order.count) pages, files \(pages.count)" }
}

/// `pkgtool verify PATH`: the package's manifest matches its content.
func verifyPackage(_ path: String) throws {
    let result = try runProgram(builtExecutable("pkgtool"), ["verify", path])
    #expect(result.status == 0, "pkgtool verify '\(path)': \(result.output)\(result.error)")
}

/// Makes a notebook of `pageCount` pages ("page 0"…) at `path`; returns its page ids.
@MainActor
func makeNotebook(at path: String, pageCount: Int) async throws -> [UUID] {
    let session = try await DocumentSession.create { configuration, _ in NotebookDocument(configuration: configuration) }
    session.durability = .none
    let ids = (0..<pageCount).map { session.document.addPage("page \($0)") }
    try await session.save(to: fileURL(path))
    return ids
}

@MainActor
func openNotebook(_ path: String) async throws -> DocumentSession<NotebookDocument> {
    let session = try await DocumentSession.open(fileURL(path)) { configuration, _ in
        NotebookDocument(configuration: configuration)
    }
    session.durability = .none
    return session
}
