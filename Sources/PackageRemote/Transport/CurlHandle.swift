import CCurl
import CCurlShims
import Glibc
import PackageCore
import Synchronization

/// One HTTP request as libcurl will send it: method, URL and headers, all final (signed).
struct HTTPRequest: Sendable {
    var method: String
    var url: String
    /// Header lines as sent, "Name: value"; the request's own (Host, signature, conditions).
    var headers: [(name: String, value: String)]
    /// Bytes of the body (PUT), or nil for none.
    var bodyLength: Int64?
    /// The most body bytes a successful answer may carry (the range asked for, or the
    /// size a small object may have); more is cut off and refused. Nil: no bound here (the
    /// sink's own).
    var responseLimit: Int64?
    /// A ranged GET: only `206 Partial Content` brings the bytes asked for (a `200` would
    /// start at the object's first byte).
    var expectsPartialContent = false
}

/// What came back: status, the headers pkgtool reads, and the body of an error response.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [String: String] = [:]
    /// The body, when the status is not a success (S3's XML error document), capped.
    var errorBody: [UInt8] = []

    var isSuccess: Bool { (200..<300).contains(status) }
    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// The source of a request body: read in pieces by libcurl, from memory or from files, so
/// memory stays bounded whatever the object's size. `rewind` lets libcurl resend it (a
/// reused connection that turned out dead, or a retry).
protocol RequestBody: AnyObject {
    var length: Int64 { get }
    /// Fills `buffer` from the current position; returns the count (0 at the end), or nil
    /// to abort the transfer (the source failed; `failure` says why).
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int?
    func rewind()
    var failure: (any Error)? { get }
}

/// Where a successful response's body goes, piece by piece as it arrives.
protocol ResponseSink: AnyObject {
    /// Takes the next bytes; returns false to abort the transfer (`failure` says why).
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool
    var failure: (any Error)? { get }
}

/// Cancels a push, pull or log from another thread: libcurl's progress callback polls it,
/// so every transfer in flight aborts within a fraction of a second, and the operation
/// throws ``RemoteError/Kind/cancelled``. What already arrived is kept for the next run.
///
/// A pull's save (the engine writing DEST) stops at its next file or chunk, leaving DEST
/// as it was.
public final class TransferCancellation: Sendable {
    /// The flag, shared with the save engine's run of a pull.
    let saveCancellation = SaveCancellation()
    /// A cancellation not yet cancelled; give it to ``RemoteOptions/cancellation``.
    public init() {}
    /// Cancels the operation; safe from any thread, any number of times.
    public func cancel() { saveCancellation.cancel() }
    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { saveCancellation.isCancelled }
}

/// A libcurl easy handle: one connection cache, used by one thread at a time.
///
/// Each `perform` resets the handle's options (keeping its open connections, so
/// consecutive requests to the same endpoint reuse one TCP connection) and sets them
/// afresh. Bodies stream through `@convention(c)` callbacks that find their Swift
/// context through an opaque pointer to the `CurlExchange` of the request.
final class CurlHandle {
    private let handle: UnsafeMutableRawPointer
    let settings: TransportSettings

    init(settings: TransportSettings) {
        _ = CurlLibrary.initialised
        guard let handle = curl_easy_init() else { fatalError("curl_easy_init failed: out of memory") }
        self.handle = handle
        self.settings = settings
    }

    deinit { curl_easy_cleanup(handle) }

    /// Sends `request` with `body`, giving a successful response's body to `sink`.
    /// - Returns: the response, or the libcurl error that prevented one.
    /// - Complexity: one HTTP exchange; memory is libcurl's buffers plus the error body (≤ 64 KiB).
    func perform(
        _ request: HTTPRequest, body: (any RequestBody)?, sink: (any ResponseSink)?, cancellation: TransferCancellation?
    ) -> Result<HTTPResponse, CurlFailure> {
        let exchange = CurlExchange(
            body: body, sink: sink, cancellation: cancellation, responseLimit: request.responseLimit,
            expectsPartialContent: request.expectsPartialContent)
        curl_easy_reset(handle)
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(headerList) }
        // "Expect:" empty: no 100-continue round trip before each upload.
        for line in request.headers.map({ "\($0.name): \($0.value)" }) + ["Expect:", "Accept:"] {
            headerList = curl_slist_append(headerList, line)
        }
        let context = Unmanaged.passUnretained(exchange).toOpaque()
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code: CURLcode = errorText.withUnsafeMutableBufferPointer { errorBuffer in
            pkg_curl_setopt_pointer(handle, CURLOPT_URL, request.url)
            pkg_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headerList)
            pkg_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress)
            pkg_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            // A redirect is an answer, never followed: the signed request goes to the endpoint only.
            pkg_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
            pkg_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, PKG_CURL_HTTP_VERSION_1_1)
            pkg_curl_setopt_long(handle, CURLOPT_TCP_KEEPALIVE, 1)
            setLimits(for: request)
            setMethod(of: request, context: context)
            setCallbacks(context: context)
            return withExtendedLifetime(exchange) { curl_easy_perform(handle) }
        }
        return outcome(code, of: exchange, errorText: errorText)
    }

    /// The connect timeout, the low-speed limit and the deadline, the buffer sizes, the
    /// speed cap and the CA bundle, from `settings`.
    private func setLimits(for request: HTTPRequest) {
        pkg_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, settings.connectTimeoutMilliseconds)
        // A transfer slower than the low-speed limit for this long is abandoned, and every
        // request has a deadline: a server trickling bytes cannot hold the operation forever.
        pkg_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, settings.effectiveMinimumBytesPerSecond)
        pkg_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, max(1, settings.stallTimeoutSeconds))
        pkg_curl_setopt_long(
            handle, CURLOPT_TIMEOUT_MS,
            settings.deadlineMilliseconds(forBytes: request.bodyLength ?? request.responseLimit))
        // libcurl reads up to 100 buffers in a row before it looks at the speed cap: with
        // 256 KiB buffers a fast server (a local one) gets 25 MiB through at once. A capped
        // transfer therefore reads in buffers of 1/256 of its rate (4–256 KiB).
        let bufferSize = settings.maximumBytesPerSecond.map { min(max(Int($0 / 256), 4 << 10), 256 << 10) } ?? 256 << 10
        pkg_curl_setopt_long(handle, CURLOPT_BUFFERSIZE, bufferSize)
        pkg_curl_setopt_long(handle, CURLOPT_UPLOAD_BUFFERSIZE, max(bufferSize, 16 << 10))
        if let rate = settings.maximumBytesPerSecond {
            pkg_curl_setopt_offset(handle, CURLOPT_MAX_SEND_SPEED_LARGE, curl_off_t(rate))
            pkg_curl_setopt_offset(handle, CURLOPT_MAX_RECV_SPEED_LARGE, curl_off_t(rate))
        }
        if let bundle = settings.certificateBundle {
            pkg_curl_setopt_pointer(handle, CURLOPT_CAINFO, bundle)
        }
    }

    /// The method: HEAD asks for no body, PUT streams `RequestBody` through the read and
    /// seek callbacks, anything else but GET is a custom request.
    private func setMethod(of request: HTTPRequest, context: UnsafeMutableRawPointer) {
        switch request.method {
        case "GET": break
        case "HEAD": pkg_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        case "PUT":
            pkg_curl_setopt_long(handle, CURLOPT_UPLOAD, 1)
            pkg_curl_setopt_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(request.bodyLength ?? 0))
            pkg_curl_setopt_read_function(handle, curlReadCallback)
            pkg_curl_setopt_pointer(handle, CURLOPT_READDATA, context)
            pkg_curl_setopt_seek_function(handle, curlSeekCallback)
            pkg_curl_setopt_pointer(handle, CURLOPT_SEEKDATA, context)
        default: pkg_curl_setopt_pointer(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
    }

    /// The body, header and progress callbacks, each reaching the exchange through `context`
    /// (the progress one polls the cancellation).
    private func setCallbacks(context: UnsafeMutableRawPointer) {
        pkg_curl_setopt_write_function(handle, curlWriteCallback)
        pkg_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        pkg_curl_setopt_header_function(handle, curlHeaderCallback)
        pkg_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        pkg_curl_setopt_long(handle, CURLOPT_NOPROGRESS, 0)
        pkg_curl_setopt_xferinfo_function(handle, curlProgressCallback)
        pkg_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, context)
    }

    /// The response, or why there is none: the cause a body source or sink gave, the
    /// cancellation, or libcurl's own message (`errorText`, else its text for `code`).
    private func outcome(_ code: CURLcode, of exchange: CurlExchange, errorText: [CChar])
        -> Result<HTTPResponse, CurlFailure>
    {
        if code == CURLE_WRITE_ERROR, exchange.errorBodyComplete {
            // An error document cut at its cap: the status and what arrived are the answer.
            return .success(HTTPResponse(status: exchange.status, headers: exchange.headers, errorBody: exchange.errorBody))
        }
        if code != CURLE_OK {
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            if let failure = exchange.violation ?? exchange.body?.failure ?? exchange.sink?.failure {
                return .failure(CurlFailure(code: code.rawValue, message: message, cause: failure))
            }
            if exchange.cancellation?.isCancelled == true {
                return .failure(CurlFailure(code: code.rawValue, message: "cancelled", cause: CancellationError()))
            }
            return .failure(CurlFailure(code: code.rawValue, message: message, cause: nil))
        }
        var status = 0
        pkg_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPResponse(status: status, headers: exchange.headers, errorBody: exchange.errorBody))
    }
}

/// Why libcurl returned no response: its error code and message, and the cause when a
/// body source or sink aborted the transfer (a file that changed, a blob that failed
/// verification) or the transfer was cancelled.
struct CurlFailure: Error, Sendable {
    var code: UInt32
    var message: String
    var cause: (any Error)?

    /// Connection-level failures worth another attempt: the server may come back.
    var isTransient: Bool {
        guard cause == nil else { return false }
        let transient: [CURLcode] = [
            CURLE_COULDNT_CONNECT, CURLE_OPERATION_TIMEDOUT, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING,
            CURLE_PARTIAL_FILE, CURLE_COULDNT_RESOLVE_HOST, CURLE_SSL_CONNECT_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM,
            CURLE_SEND_FAIL_REWIND,
        ]
        return transient.contains { $0.rawValue == code }
    }

    /// Whether the request reached a server: anything but a failure to resolve, connect
    /// or complete a TLS handshake (a timeout after connecting means the server was slow
    /// to answer, not unreachable).
    var reachedServer: Bool {
        ![CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_SSL_CONNECT_ERROR]
            .contains { $0.rawValue == code }
    }

    /// Whether libcurl gave up on time: the low-speed limit or the request's deadline.
    var timedOut: Bool { code == CURLE_OPERATION_TIMEDOUT.rawValue }
}

/// The Swift side of one `perform`: what the C callbacks reach through their opaque pointer.
final class CurlExchange {
    let body: (any RequestBody)?
    let sink: (any ResponseSink)?
    let cancellation: TransferCancellation?
    let responseLimit: Int64?
    let expectsPartialContent: Bool
    var status = 0
    var headers: [String: String] = [:]
    var errorBody: [UInt8] = []
    /// The error document reached its cap: the rest is not read.
    var errorBodyComplete = false
    /// Body bytes of a successful answer so far.
    var received: Int64 = 0
    /// Why the answer was refused as it arrived (more than was asked for, a 200 to a range).
    var violation: ResponseViolation?

    /// The most an error document keeps (S3's are a few hundred bytes).
    static let errorBodyLimit = 64 << 10

    init(
        body: (any RequestBody)?, sink: (any ResponseSink)?, cancellation: TransferCancellation?,
        responseLimit: Int64? = nil, expectsPartialContent: Bool = false
    ) {
        self.body = body
        self.sink = sink
        self.cancellation = cancellation
        self.responseLimit = responseLimit
        self.expectsPartialContent = expectsPartialContent
    }

    /// A header line; a status line starts a new set (after a 100 Continue, say).
    func headerLine(_ bytes: UnsafeRawBufferPointer) {
        let line = Self.trimmed(String(decoding: bytes, as: UTF8.self)[...])
        if line.hasPrefix("HTTP/") {
            headers = [:]
            let parts = line.split(separator: " ")
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].lowercased()
        headers[name] = String(Self.trimmed(line[line.index(after: colon)...]))
    }

    /// `text` without the spaces, tabs and line ends around it ("\r\n" is one Character).
    static func trimmed(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return text[first...last]
    }

    /// Body bytes: to the sink on success, kept (capped) as the error document otherwise.
    ///
    /// A successful answer may not carry more than was asked for (`responseLimit`) nor more
    /// than its own `Content-Length`, and a ranged GET must be answered `206`: anything else
    /// is cut off here, before the sink sees a byte too many, and refused (`violation`).
    /// Nothing is allocated from a length the server states: bytes are taken as they come.
    func bodyBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if (200..<300).contains(status) {
            if expectsPartialContent && status != 206 {
                violation = ResponseViolation(
                    "answered a ranged GET with HTTP \(status) instead of 206 Partial Content")
                return false
            }
            let stated = headers["content-length"].flatMap { Int64($0) }
            if let limit = responseLimit, let stated, stated > limit {
                violation = ResponseViolation(
                    "states a Content-Length of \(stated) for at most \(limit) bytes asked for; the answer was refused")
                return false
            }
            let total = received + Int64(bytes.count)
            if let limit = responseLimit, total > limit {
                violation = ResponseViolation("sent more than the \(limit) bytes asked for; the answer was cut off")
                return false
            }
            if let stated, total > stated {
                violation = ResponseViolation("sent more than the \(stated) bytes its Content-Length states")
                return false
            }
            received = total
            return sink?.receive(bytes) ?? true
        }
        let room = Self.errorBodyLimit - errorBody.count
        errorBody.append(contentsOf: bytes.prefix(room))
        if bytes.count >= room {
            errorBodyComplete = true
            return false
        }
        return true
    }
}

/// A successful answer refused as it arrived: it went on past what was asked for, or past
/// its own `Content-Length`, or answered a range with the whole object.
struct ResponseViolation: Error, Sendable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

private let curlWriteCallback: curl_write_callback = { pointer, size, count, context in
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    guard total > 0, let pointer else { return 0 }
    return exchange.bodyBytes(UnsafeRawBufferPointer(start: pointer, count: total)) ? total : 0
}

private let curlHeaderCallback: curl_write_callback = { pointer, size, count, context in
    guard let context, let pointer else { return 0 }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    exchange.headerLine(UnsafeRawBufferPointer(start: pointer, count: size * count))
    return size * count
}

private let curlReadCallback: curl_read_callback = { pointer, size, count, context in
    guard let context, let pointer else { return PKG_CURL_READFUNC_ABORT }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    guard let body = exchange.body else { return 0 }
    let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: size * count)
    return body.read(into: buffer) ?? PKG_CURL_READFUNC_ABORT
}

private let curlSeekCallback: curl_seek_callback = { context, offset, origin in
    guard let context, offset == 0, origin == SEEK_SET else { return PKG_CURL_SEEKFUNC_FAIL }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    exchange.body?.rewind()
    return PKG_CURL_SEEKFUNC_OK
}

private let curlProgressCallback: curl_xferinfo_callback = { context, _, _, _, _ in
    guard let context else { return 0 }
    let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
    return exchange.cancellation?.isCancelled == true ? 1 : 0
}

/// libcurl's global initialisation, done once before the first handle.
enum CurlLibrary {
    static let initialised: Bool = pkg_curl_global_init() == CURLE_OK
}
