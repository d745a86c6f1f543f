import Glibc

/// Where each fuzz run writes its input and extracts it: `$PKGTOOL_FUZZ_SCRATCH` (or /tmp),
/// one name per process so that parallel fuzzing jobs do not meet.
let scratch: String = {
    let base = getenv("PKGTOOL_FUZZ_SCRATCH").map { String(cString: $0) } ?? "/tmp"
    return base + "/pkgtool-fuzz-\(getpid())"
}()
