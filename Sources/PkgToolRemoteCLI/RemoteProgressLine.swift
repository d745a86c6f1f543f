import Dispatch
import PackageCore
import PkgToolCLI

/// Draws a push's or pull's progress on a terminal's stderr, ten times a second, from a
/// Dispatch timer (the work blocks the calling thread).
final class RemoteProgressLine: @unchecked Sendable {
    // @unchecked: the console and `running` are touched only on `queue` until `stop()`
    // returns, and by the owner after.
    private let manager: ProgressManager
    private let console: Console
    private let verb: String
    private let queue = DispatchQueue(label: "pkgtool.progress-line")
    private let timer: any DispatchSourceTimer
    private var running = true

    /// Runs `body` with a fresh progress manager drawn as `verb`'s line while it runs (on a
    /// terminal), the line erased however `body` ends.
    static func showing<Result>(
        _ verb: String, console: Console, _ body: (_ progress: consuming Subprogress) throws -> Result
    ) throws -> Result {
        let root = ProgressManager(totalCount: 1)
        let line = start(root, console: console, verb: verb)
        defer { line?.stop() }
        return try body(root.subprogress(assigningCount: 1))
    }

    /// Starts drawing when stderr is a terminal; nil otherwise.
    static func start(_ manager: ProgressManager, console: Console, verb: String) -> RemoteProgressLine? {
        guard console.errorIsTerminal else { return nil }
        return RemoteProgressLine(manager: manager, console: console, verb: verb)
    }

    private init(manager: ProgressManager, console: Console, verb: String) {
        self.manager = manager
        self.console = console
        self.verb = verb
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    private func draw() {
        guard running else { return }
        let percent = Int((manager.fractionCompleted * 100).rounded(.down))
        // The byte counts live on the library's own manager, below this one.
        let done = RemoteCommandSupport.bytes(Int64(manager.summary(of: ProgressManager.Properties.CompletedByteCount.self)))
        let total = RemoteCommandSupport.bytes(Int64(manager.summary(of: ProgressManager.Properties.TotalByteCount.self)))
        console.progress("\(verb): \(percent)%  \(done) of \(total)")
    }

    deinit { timer.cancel() }

    /// Stops the timer (waiting for a drawing in progress) and erases the line.
    func stop() {
        queue.sync {
            running = false
            timer.cancel()
        }
        console.clearProgress()
    }
}
