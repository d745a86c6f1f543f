/// The process's standard output or standard error, as a command-line front end writes them.
///
/// Console output is not package I/O: it bypasses the fault-injection seam, and a write that
/// fails (a closed descriptor, a full disk, a pipe whose reader left while SIGPIPE is
/// ignored) is returned rather than thrown: the front end decides what it means for the
/// exit status once the command is done.
package enum StandardStream: Sendable {
    case output
    case error

    var descriptor: Int32 { self == .output ? 1 : 2 }

    /// Whether the stream is a terminal (isatty(3)): progress lines are drawn only then.
    package var isTerminal: Bool { Syscall.isatty(descriptor) }

    /// The width of the terminal the stream is, in columns; nil when it is not a terminal.
    package var terminalColumns: Int? { Syscall.terminalColumns(descriptor) }

    /// Writes every byte, retrying short writes and EINTR; the error when the stream refused
    /// them, nil when all were written.
    ///
    /// - Complexity: one write(2) per chunk the kernel accepts; no copy.
    @discardableResult
    package func writeAll(_ bytes: UnsafeRawBufferPointer) -> Errno? {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try Syscall.writeStream(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch {
                return error
            }
        }
        return nil
    }

    /// Makes sure descriptors 0, 1 and 2 are open, opening /dev/null on any that is closed,
    /// so that no file the process opens later becomes "standard output" by accident.
    /// Returns the streams that were closed: output written to them must count as failed.
    package static func guardStandardDescriptors() -> (inputClosed: Bool, outputClosed: Bool, errorClosed: Bool) {
        var closed = [false, false, false]
        for descriptor in Int32(0)...2 where !Syscall.isOpen(descriptor) {
            closed[Int(descriptor)] = true
            // Opened in order, each lands on the lowest free descriptor: the one closed.
            _ = Syscall.openDevNull(forWriting: descriptor != 0)
        }
        return (closed[0], closed[1], closed[2])
    }
}
