import Glibc
import PackageCore

/// A deterministic crash for tests: with `PKGTOOL_TEST_KILL_AFTER_REQUESTS=N` in its
/// environment, a debug build kills its own process with SIGKILL before its request N+1,
/// so a sweep can stop a command at every request boundary. Release builds ignore it.
enum TestKillSwitch {
    #if DEBUG
        private static let limit: Int? = ProcessEnvironment.value("PKGTOOL_TEST_KILL_AFTER_REQUESTS").flatMap { Int($0) }
    #endif

    /// Called before each request with the number of requests sent so far.
    static func beforeRequest(sent: Int) {
        #if DEBUG
            if let limit, sent >= limit { kill(getpid(), SIGKILL) }
        #endif
    }
}
