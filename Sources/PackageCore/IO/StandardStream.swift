/// The process's standard output or standard error, as a command-line front end writes them.
///
/// Console output is not package I/O: it bypasses the fault-injection seam, and a write that
/// fails (a closed pipe, a full disk) is reported as `false` rather than thrown, since there
/// is nowhere left to report it.
package enum StandardStream: Sendable {
    case output
    case error

    var descriptor: Int32 { self == .output ? 1 : 2 }

    /// Whether the stream is a terminal (isatty(3)): progress lines are drawn only then.
    package var isTerminal: Bool { Syscall.isatty(descriptor) }

    /// Writes every byte, retrying short writes and EINTR; false when the stream refused them.
    ///
    /// - Complexity: one write(2) per chunk the kernel accepts; no copy.
    @discardableResult
    package func writeAll(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            do {
                offset += try Syscall.writeStream(descriptor, UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            } catch {
                return false
            }
        }
        return true
    }
}
