import Glibc

/// The clocks the package reads, one `clock_gettime` each, and the one sleep it takes.
///
/// Which clock matters: durations from the monotonic one (it never jumps when the wall
/// clock is set), times written down (versions, file-time windows) from the real-time ones.
package enum SystemClock {
    /// Nanoseconds on `CLOCK_MONOTONIC`: for measuring durations.
    package static var monotonicNanoseconds: Int64 { Syscall.clockNanoseconds(CLOCK_MONOTONIC) }

    /// Nanoseconds since the epoch (`CLOCK_REALTIME`): no earlier than any file timestamp
    /// the kernel has set so far.
    package static var realtimeNanoseconds: Int64 { Syscall.clockNanoseconds(CLOCK_REALTIME) }

    /// Nanoseconds since the epoch on `CLOCK_REALTIME_COARSE`, the clock the kernel sets file
    /// timestamps from: no later than any timestamp it sets from now on.
    package static var coarseRealtimeNanoseconds: Int64 { Syscall.clockNanoseconds(CLOCK_REALTIME_COARSE) }

    /// Whole seconds since the epoch, as `time(2)` gives them.
    package static var secondsSinceEpoch: Int64 { Syscall.secondsSinceEpoch() }

    /// Sleeps for about `seconds`; a signal may cut it short (as `usleep` lets it), which a caller
    /// polling for cancellation between short sleeps wants.
    package static func sleep(seconds: Double) { Syscall.sleep(nanoseconds: Int64(seconds * 1e9)) }
}

/// Wall-clock time of one operation (save, push, pull, prune), on the monotonic clock.
package struct Stopwatch: Sendable {
    private let start = SystemClock.monotonicNanoseconds

    package init() {}

    /// Seconds since the stopwatch was made.
    package var seconds: Double { Double(SystemClock.monotonicNanoseconds - start) / 1e9 }
}
