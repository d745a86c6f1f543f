import PackageCore

/// Where a command writes: standard output (buffered), standard error (one line per
/// message, prefixed `pkgtool: `), and whether each is a terminal.
///
/// Names in output are the commands' business (`NameQuoting`); messages on standard error
/// have their control characters escaped here, whatever they quote.
///
/// Tests create one that captures both streams in memory.
public final class Console {
    private var outputBuffer: [UInt8] = []
    private let captureOnly: Bool
    public private(set) var capturedOutput: [UInt8] = []
    public private(set) var capturedErrors: [String] = []
    /// Whether anything was written to standard output (a `--json` failure then adds nothing).
    public private(set) var wroteOutput = false
    /// The last error line written (warnings aside), without the `pkgtool: ` prefix: what a
    /// `--json` failure reports.
    public private(set) var lastError: String?
    /// Whether standard error is a terminal: progress lines are drawn only then.
    public let errorIsTerminal: Bool
    /// Why standard output refused bytes, once it has (a closed descriptor, a full disk, a
    /// reader gone while SIGPIPE is ignored): output was lost, so the command cannot
    /// report success. Later output is dropped.
    public private(set) var outputFailure: Errno?
    /// Standard output was closed when the process started (it now points at /dev/null).
    private let outputWasClosed: Bool
    /// Standard input was closed when the process started (it now reads /dev/null): a
    /// command reading it (`hash -`) must fail, not hash nothing.
    public let inputWasClosed: Bool
    /// Whether this console is the process's own (`PkgTool.main`): only then may a command
    /// take Ctrl-C to stop its work cleanly (`InterruptSignals`); in-process callers keep
    /// their signals.
    public let ownsProcess: Bool
    /// Secrets no line may carry (`SecretRedaction`): the process's own console scrubs the
    /// values of `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from everything it writes,
    /// and the userinfo of URLs from messages and progress lines.
    package var redaction = SecretRedaction(secrets: [])

    /// A console on the process's standard output and error.
    public convenience init() {
        self.init(outputWasClosed: false)
    }

    /// For a command whose work, killed mid-way, would leave something to clean: the first
    /// Ctrl-C (SIGTERM, SIGHUP) raises `cancellation`, and the work removes what it made
    /// and stops; `finishInterrupted` then ends the process by that signal. Does nothing
    /// for a console that does not own the process.
    func stopOnInterrupt(_ cancellation: SaveCancellation) {
        stopOnInterrupt { cancellation.cancel() }
    }

    /// As `stopOnInterrupt(_:)`, for work cancelled through `cancel` (a transfer's).
    package func stopOnInterrupt(_ cancel: @escaping @Sendable () -> Void) {
        guard ownsProcess else { return }
        InterruptSignals.onFirst(cancel)
    }

    /// After work that failed: when an interrupt stopped it, the process ends by that
    /// signal (exit 130 for Ctrl-C, nothing printed, as a shell expects); otherwise returns.
    package func finishInterrupted() {
        guard ownsProcess, let signal = InterruptSignals.receivedSignal else { return }
        clearProgress()
        flush()
        InterruptSignals.reraise(signal)
    }

    /// The width help is filled to: the terminal's standard output is (at most 100
    /// columns), else 80.
    var helpWidth: Int { TextWrapping.helpWidth(terminalColumns: captureOnly ? nil : StandardStream.output.terminalColumns) }

    /// A console on the process's standard output and error, which `PkgTool.main` makes
    /// after reopening closed standard descriptors: output to a stream that was closed
    /// fails as writing to the closed descriptor would have.
    init(outputWasClosed: Bool, inputWasClosed: Bool = false) {
        captureOnly = false
        errorIsTerminal = StandardStream.error.isTerminal
        self.outputWasClosed = outputWasClosed
        self.inputWasClosed = inputWasClosed
        ownsProcess = true
        outputBuffer.reserveCapacity(1 << 16)
    }

    /// A console that records everything, for tests.
    public init(capturing: Void) {
        captureOnly = true
        errorIsTerminal = false
        outputWasClosed = false
        inputWasClosed = false
        ownsProcess = false
    }

    public var capturedText: String { String(decoding: capturedOutput, as: UTF8.self) }

    /// Writes `text` to standard output, as is.
    public func write(_ text: String) {
        if !text.isEmpty { wroteOutput = true }
        let text = redaction.secrets.isEmpty ? text : redaction.apply(text)
        if captureOnly {
            capturedOutput.append(contentsOf: text.utf8)
            return
        }
        outputBuffer.append(contentsOf: text.utf8)
        if outputBuffer.count >= 1 << 16 { flush() }
    }

    /// Writes `text` and a newline to standard output.
    public func line(_ text: String) { write(text + "\n") }

    /// Writes one line to standard error: `pkgtool: <message>`. Control characters inside
    /// the message (a newline, ESC, in a name it quotes) are written as C escapes, so that
    /// every message stays one line and none drives the terminal.
    public func error(_ message: String) {
        let folded = NameQuoting.escapingControlCharacters(redaction.apply(message))
        if !message.hasPrefix("warning: ") { lastError = folded }
        if captureOnly {
            capturedErrors.append(folded)
            return
        }
        flush()
        writeAll(.error, Array(("pkgtool: " + folded + "\n").utf8))
    }

    /// A `pkgtool: warning: …` line on standard error.
    public func warning(_ message: String) {
        guard !quiet else { return }
        error("warning: " + message)
    }

    /// `-q`: warnings and informational lines (`note`) are dropped; errors and the reports
    /// a command was asked for (`--stats`, `--json`) are not.
    public var quiet = false

    /// An informational line on standard output (`pushed … as version 3`), dropped when quiet.
    public func note(_ text: String) {
        guard !quiet else { return }
        line(text)
    }

    /// Writes raw text to standard error (help on usage errors).
    public func errorText(_ text: String) {
        let text = redaction.apply(text)
        if captureOnly {
            capturedErrors.append(text.trimmingTrailingNewlines)
            return
        }
        flush()
        writeAll(.error, Array(text.utf8))
    }

    /// Draws a transient status line on a terminal's standard error; nothing otherwise.
    public func progress(_ text: String) {
        guard errorIsTerminal, !captureOnly else { return }
        writeAll(.error, Array(("\r\u{1B}[K" + redaction.apply(text)).utf8))
    }

    /// Clears a status line drawn by `progress`.
    public func clearProgress() {
        guard errorIsTerminal, !captureOnly else { return }
        writeAll(.error, Array("\r\u{1B}[K".utf8))
    }

    public func flush() {
        guard !captureOnly, !outputBuffer.isEmpty else { return }
        defer { outputBuffer.removeAll(keepingCapacity: true) }
        guard outputFailure == nil else { return }
        if outputWasClosed {
            outputFailure = .badFileDescriptor
            return
        }
        outputFailure = outputBuffer.withUnsafeBytes { StandardStream.output.writeAll($0) }
    }

    private func writeAll(_ stream: StandardStream, _ bytes: [UInt8]) {
        // Standard error refusing a message leaves nowhere to say so; the exit status stands.
        bytes.withUnsafeBytes { _ = stream.writeAll($0) }
    }
}

extension String {
    var trimmingTrailingNewlines: String {
        var text = self
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }
}
