import CSystemShims
import Dispatch
import Glibc
import Synchronization

/// Ctrl-C (SIGINT), SIGTERM and SIGHUP turned into a request to stop, for commands whose
/// work leaves something to clean when killed mid-way (a save's staging tree, a pack's new
/// archive): the first signal cancels the work, which removes what it made and returns; a
/// second one kills the process at once, as if nothing had been installed.
///
/// Front ends only: a library must not take the process's signals.
package enum InterruptSignals {
    private static let received = Atomic<Int32>(0)
    private static let sources = Mutex<[DispatchSourceSignal]>([])
    private static let watched: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    /// A queue of its own: an overcommitting serial queue gets a thread even while the
    /// work keeps every thread of the global pool busy (pack's compressors run there).
    private static let queue = DispatchQueue(label: "pkgtool.interrupts")

    /// Calls `handler` on the first of those signals (on a queue of its own), after which the
    /// signals' default dispositions are back.
    package static func onFirst(_ handler: @escaping @Sendable () -> Void) {
        sources.withLock { sources in
            // A signal ignored from the start (a background job's SIGINT, nohup's SIGHUP)
            // stays ignored, as the parent asked.
            // (No SIG_IGN first, as Darwin needs: libdispatch on Linux installs its own
            // handler, from another thread; ignoring the signal meanwhile would lose one sent
            // in that gap, where the default action at least stops the process.)
            for signal in watched where pkg_signal_is_ignored(signal) == 0 {
                let source = DispatchSource.makeSignalSource(signal: signal, queue: queue)
                source.setEventHandler {
                    guard received.compareExchange(expected: 0, desired: signal, ordering: .relaxed).exchanged else { return }
                    for other in watched where other == signal || pkg_signal_is_ignored(other) == 0 {
                        Glibc.signal(other, SIG_DFL)
                    }
                    handler()
                }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// The signal that asked the work to stop, or nil.
    package static var receivedSignal: Int32? {
        let value = received.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Ends the process by the signal received, with its default disposition, so that the
    /// parent sees what killed it (a shell prints nothing for Ctrl-C and reports 130).
    /// (Sent to the process, not the thread: libdispatch may keep it blocked in some
    /// threads; should none take it at once, the exit status says the same: 128 + signal.)
    package static func reraise(_ signal: Int32) -> Never {
        Glibc.signal(signal, SIG_DFL)
        Glibc.kill(getpid(), signal)
        Glibc.exit(128 + signal)
    }
}
