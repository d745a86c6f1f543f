import CSystemShims
import Glibc

/// What a command-line front end asks of its process: environment variables, its own
/// executable, running another program in its place, and its exit status.
package enum ProcessEnvironment {
    /// Has the allocator give large freed blocks (256 KiB and more) back to the system at
    /// once. Left alone, glibc raises its mmap threshold to the size of the first large
    /// block freed (up to 32 MiB) and keeps later blocks of that size in its heap, so a
    /// command that drops one tree of many entries and builds another holds the pages of
    /// both (a `diff` of 100,000 entries against a remote: 121 MiB of RSS instead of 103).
    package static func returnLargeBlocksPromptly() {
        pkg_return_large_blocks_promptly(256 << 10)
    }

    /// Gives the pages of freed small blocks back to the system (malloc_trim(3)), after a
    /// phase whose working state is gone: a tree scan's per-directory arrays, freed on the
    /// scan's worker threads, otherwise stay resident in their arenas while the next phase
    /// builds its own.
    package static func releaseFreeMemory() {
        pkg_release_free_memory()
    }

    /// The bytes of the first command-line argument (after the program's name) that is not
    /// valid UTF-8, or nil. `CommandLine.arguments` repairs such bytes into U+FFFD, which
    /// can name another file: a front end refuses the argument instead.
    package static func firstNonUTF8Argument() -> [UInt8]? {
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            if String(validatingCString: pointer) != nil { continue }
            let raw = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
            return Array(UnsafeBufferPointer(start: raw, count: strlen(pointer)))
        }
        return nil
    }

    /// The value of an environment variable, nil when unset (getenv(3)).
    package static func value(_ name: String) -> String? { Syscall.getenv(name) }

    /// This process's executable, from /proc/self/exe; nil when it cannot be read.
    package static var executablePath: String? {
        try? FileSystem.readSymbolicLink("/proc/self/exe")
    }

    /// Whether `path` names a file this process may execute (access(2) X_OK).
    package static func isExecutable(_ path: String) -> Bool {
        (try? Syscall.access(path, X_OK)) != nil
    }

    /// Whether `path` names a file this process may read (access(2) R_OK).
    package static func isReadable(_ path: String) -> Bool {
        (try? Syscall.access(path, R_OK)) != nil
    }

    /// Runs the program at `path` in place of this process (execv(2)), `arguments[0]` being
    /// its name; returns only when that failed, with the reason.
    package static func replaceProcess(with path: String, arguments: [String]) -> Errno {
        Syscall.execv(path, arguments)
    }

    /// This machine's name (gethostname(2)), as UTF-8 with invalid bytes repaired; "" when
    /// it has none.
    package static var hostName: String {
        Syscall.gethostname().map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Seconds since the epoch now, and the local time zone's offset east of UTC now
    /// (time(2), localtime_r(3)): the day a person reads on this machine's clock.
    package static func nowWithLocalOffset() -> (seconds: Int64, offset: Int64) { Syscall.nowWithLocalOffset() }

    /// Ends the process with `status` (exit(3)).
    package static func exit(_ status: Int32) -> Never { Syscall.exit(status) }
}

/// The number of cores this process may use (its CPU affinity mask). Usable from inline
/// code: it is the default `workers` of public calls.
@usableFromInline package enum ProcessInfoCores {
    @usableFromInline package static var active: Int { Syscall.availableProcessors() }
}
