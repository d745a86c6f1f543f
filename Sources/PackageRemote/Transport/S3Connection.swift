import Glibc
import PackageCore
import Synchronization

/// Counts of what went over the wire, shared by every connection of one operation.
package final class TransferCounters: Sendable {
    private let values = Mutex((requests: 0, retries: 0, sent: Int64(0), received: Int64(0)))
    package init() {}

    /// HTTP requests sent (retries included).
    package var requests: Int { values.withLock { $0.requests } }
    /// Requests that were attempts after a failure.
    package var retries: Int { values.withLock { $0.retries } }
    /// Body bytes uploaded (PUT bodies) and downloaded (GET bodies).
    package var bytesSent: Int64 { values.withLock { $0.sent } }
    package var bytesReceived: Int64 { values.withLock { $0.received } }

    func request(retry: Bool) { values.withLock { $0.requests += 1; if retry { $0.retries += 1 } } }
    func sent(_ count: Int64) { values.withLock { $0.sent += count } }
    func received(_ count: Int64) { values.withLock { $0.received += count } }

    /// The last transient error the store answered to any request of the operation
    /// ("HTTP 500 InternalError (…)"): a request that gives up without an answer of its own
    /// names it, whichever of the parallel transfers gave up first (a store out of space
    /// answers one upload and holds the others).
    private let lastErrorAnswer = Mutex<String?>(nil)
    func answered(_ problem: String) { lastErrorAnswer.withLock { $0 = problem } }
    var lastAnswer: String? { lastErrorAnswer.withLock { $0 } }
}

/// What a conditional PUT may require of the object it replaces.
enum WriteCondition: Sendable, Equatable {
    case none
    /// Create only: `If-None-Match: *`.
    case absent
    /// Replace only the version read: `If-Match: ETAG`.
    case matching(etag: String)
}

/// The outcome of a PUT: stored, or the condition did not hold (412).
enum PutOutcome: Sendable, Equatable {
    case stored(etag: String?)
    case preconditionFailed
}

/// A response body sink that can pick up where it stopped: it counts what it accepted, so
/// a retried GET asks only for the rest (`Range: bytes=N-`).
protocol ResumableSink: ResponseSink {
    var received: Int64 { get }
}

/// One thread's connection to a store: signs, sends and retries S3 requests.
///
/// Not thread-safe (it owns one libcurl handle): each transfer thread makes its own.
final class S3Connection {
    let configuration: S3Configuration
    let counters: TransferCounters
    let cancellation: TransferCancellation?
    private let handle: CurlHandle
    private let signer: SigV4Signer

    init(configuration: S3Configuration, counters: TransferCounters, cancellation: TransferCancellation?) {
        self.configuration = configuration
        self.counters = counters
        self.cancellation = cancellation
        handle = CurlHandle(settings: configuration.transport)
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
    }

    // MARK: Operations

    /// GETs a small object whole (a head record, a manifest), at most `limit` bytes.
    /// - Returns: its bytes and ETag, or nil when there is no such key.
    func getObject(bucket: String, key: String, limit: Int) throws(RemoteError) -> (bytes: [UInt8], etag: String?)? {
        let sink = MemorySink(limit: limit)
        guard let response = try get(bucket: bucket, key: key, range: nil, limit: Int64(limit), into: sink) else {
            return nil
        }
        if let failure = sink.failure { throw RemoteError(.server, "\(describe(bucket, key)): \(failure)") }
        return (sink.bytes, response.header("etag"))
    }

    /// GETs `range` of an object (or all of it, at most `limit` bytes) into `sink`,
    /// resuming after a broken connection where the sink stopped.
    ///
    /// An answer longer than the range (or than `limit`) is cut off and refused, as is a
    /// `200` to a ranged request (`ResponseViolation`).
    /// - Returns: the response, or nil when there is no such key.
    @discardableResult
    func get(
        bucket: String, key: String, range: Range<Int64>?, limit: Int64? = nil, into sink: some ResumableSink
    ) throws(RemoteError) -> HTTPResponse? {
        let response = try send(
            method: "GET", bucket: bucket, key: key, sink: sink,
            headers: { () -> [(name: String, value: String)] in
                let start = (range?.lowerBound ?? 0) + sink.received
                if let range { return [("Range", "bytes=\(start)-\(range.upperBound - 1)")] }
                return start > 0 ? [("Range", "bytes=\(start)-")] : []
            },
            responseLimit: { range.map { Int64($0.count) - sink.received } ?? limit.map { $0 - sink.received } })
        if response.status == 404 && S3ErrorDocument(response.errorBody)?.code != "NoSuchBucket" { return nil }
        try requireSuccess(response, bucket: bucket, key: key)
        if let range, sink.received != range.count {
            throw RemoteError(
                .server, "\(describe(bucket, key)): asked for \(range.count) bytes, got \(sink.received)")
        }
        return response
    }

    /// HEADs an object: its size and ETag, or nil when there is no such key.
    func head(bucket: String, key: String) throws(RemoteError) -> (size: Int64, etag: String?)? {
        let response = try send(method: "HEAD", bucket: bucket, key: key)
        if response.status == 404 { return nil }
        try requireSuccess(response, bucket: bucket, key: key)
        return (Int64(response.header("content-length") ?? "") ?? 0, response.header("etag"))
    }

    /// PUTs an object from `body`, whose SHA-256 is signed when known (AWS then refuses a
    /// body that arrives different), under `condition`.
    func put(
        bucket: String, key: String, body: some RequestBody, payloadHash: SHA256Digest?, condition: WriteCondition = .none
    ) throws(RemoteError) -> PutOutcome {
        var headers: [(name: String, value: String)] = [("Content-Type", "application/octet-stream")]
        switch condition {
        case .none: break
        case .absent: headers.append(("If-None-Match", "*"))
        case .matching(let etag): headers.append(("If-Match", etag))
        }
        let response = try send(
            method: "PUT", bucket: bucket, key: key, body: body, payloadHash: payloadHash?.description,
            headers: { headers })
        if response.status == 412 { return .preconditionFailed }
        try requireSuccess(response, bucket: bucket, key: key)
        counters.sent(body.length)
        return .stored(etag: response.header("etag"))
    }

    func put(bucket: String, key: String, bytes: [UInt8], condition: WriteCondition = .none) throws(RemoteError)
        -> PutOutcome
    {
        try put(
            bucket: bucket, key: key, body: MemoryBody(bytes), payloadHash: SHA256Digest.of(bytes), condition: condition)
    }

    func delete(bucket: String, key: String) throws(RemoteError) {
        let response = try send(method: "DELETE", bucket: bucket, key: key)
        if response.status == 404 { return }
        try requireSuccess(response, bucket: bucket, key: key)
    }

    /// One page of ListObjectsV2 under `prefix`: keys with their sizes, and the token of
    /// the next page.
    func list(bucket: String, prefix: String, maximum: Int = 1000, continuation: String? = nil) throws(RemoteError)
        -> (objects: [(key: String, size: Int64, modified: Int64?)], next: String?)
    {
        var query = [("list-type", "2"), ("max-keys", String(maximum)), ("prefix", prefix)]
        if let continuation { query.append(("continuation-token", continuation)) }
        let sink = MemorySink(limit: 16 << 20)
        let response = try send(
            method: "GET", bucket: bucket, key: nil, query: query, sink: sink, responseLimit: { 16 << 20 })
        try requireSuccess(response, bucket: bucket, key: nil)
        return try ListingParser.parse(sink.bytes)
    }

    /// Creates a bucket (tests and benchmarks make their own).
    func createBucket(_ bucket: String) throws(RemoteError) {
        let response = try send(method: "PUT", bucket: bucket, key: nil, body: MemoryBody([]), payloadHash: nil)
        if response.status == 409 { return }  // BucketAlreadyOwnedByYou
        try requireSuccess(response, bucket: bucket, key: nil)
    }

    // MARK: Sending, with retries

    /// Signs and sends one request, retrying transient failures (connection errors, 5xx,
    /// 429, S3's SlowDown and RequestTimeout) with exponential backoff and jitter.
    /// `headers` is asked again before each attempt (a resumed GET's range moves).
    private func send(
        method: String, bucket: String, key: String?, query: [(String, String)] = [], body: (any RequestBody)? = nil,
        payloadHash: String? = nil, sink: (any ResponseSink)? = nil,
        headers: () -> [(name: String, value: String)] = { [] }, responseLimit: () -> Int64? = { nil }
    ) throws(RemoteError) -> HTTPResponse {
        let settings = configuration.transport
        let address = configuration.address(bucket: bucket, key: key)
        var url = address.url
        if !query.isEmpty {
            url += "?" + query.map { "\(S3Encoding.encode($0.0))=\(S3Encoding.encode($0.1))" }.joined(separator: "&")
        }
        let hash = payloadHash ?? (body == nil || body!.length == 0 ? SHA256Digest.empty.description : SigV4Signer.unsignedPayload)
        var attempt = 0
        var lastProblem = ""
        while true {
            attempt += 1
            if cancellation?.isCancelled == true { throw RemoteError(.cancelled, "cancelled") }
            body?.rewind()
            let own = headers()
            let signed = signer.sign(
                method: method, path: address.path, query: query, host: address.host, headers: own,
                payloadHash: hash)
            var request = HTTPRequest(method: method, url: url, headers: signed, bodyLength: body?.length)
            request.responseLimit = responseLimit()
            request.expectsPartialContent = own.contains { $0.name == "Range" }
            TestKillSwitch.beforeRequest(sent: counters.requests)
            counters.request(retry: attempt > 1)
            let receivedBefore = (sink as? any ResumableSink)?.received ?? 0
            let outcome = handle.perform(request, body: body, sink: sink, cancellation: cancellation)
            if let resumable = sink as? any ResumableSink { counters.received(resumable.received - receivedBefore) }
            switch outcome {
            case .failure(let failure):
                if failure.cause is CancellationError { throw RemoteError(.cancelled, "cancelled") }
                if let cause = failure.cause as? RemoteError { throw cause }
                if let cause = failure.cause {
                    throw RemoteError(.server, configuration.redacted("\(method) \(describe(bucket, key)) failed: \(cause)"))
                }
                guard failure.isTransient, attempt < settings.attempts else {
                    throw RemoteError(.unreachable, configuration.redacted(giveUpMessage(failure, attempt: attempt, lastProblem)))
                }
                lastProblem = failure.message
            case .success(let response):
                let error = S3ErrorDocument(response.errorBody)
                let throttled = response.status == 429 || response.status == 503 || error?.code == "SlowDown"
                let transient =
                    response.status >= 500 || throttled || error?.code == "RequestTimeout" || error?.code == "InternalError"
                guard transient, attempt < settings.attempts else { return response }
                lastProblem = "HTTP \(response.status)\(error.map { " \($0.code)" + ($0.message.isEmpty ? "" : " (\($0.message.prefix(200)))") } ?? "")"
                counters.answered(lastProblem)
            }
            try backOff(attempt: attempt, problem: lastProblem)
        }
    }

    /// The line a transfer that failed for good ends with: that the endpoint could not be
    /// reached, or that it was reached and did not answer in time (an overloaded store, or
    /// one out of space, holds requests so) — with what it answered before, if it did.
    private func giveUpMessage(_ failure: CurlFailure, attempt: Int, _ lastProblem: String) -> String {
        let after = attempt > 1 ? " (after \(attempt) attempts)" : ""
        // This request's own last answer, else the last one the store gave another request.
        let answer = lastProblem.hasPrefix("HTTP ") ? lastProblem : counters.lastAnswer
        let earlier = answer.map { "; before that it answered \($0)" } ?? ""
        guard failure.reachedServer else {
            return "cannot reach the S3 endpoint \(configuration.endpoint): \(failure.message)\(after)\(earlier)"
        }
        let how =
            failure.timedOut
            ? "took the request but did not answer in time (an overloaded store, or one out of space, does this)"
            : "took the request but the exchange broke off"
        return "the S3 endpoint \(configuration.endpoint) \(how): \(failure.message)\(after)\(earlier)"
    }

    /// Waits before attempt `attempt + 1`: `retryDelay × 2^(attempt-1)`, capped, ±25 %.
    private func backOff(attempt: Int, problem: String) throws(RemoteError) {
        let settings = configuration.transport
        let base = min(settings.maximumRetryDelay, settings.retryDelay * pow(2, Double(attempt - 1)))
        var remaining = base * Double.random(in: 0.75...1.25)
        while remaining > 0 {
            if cancellation?.isCancelled == true { throw RemoteError(.cancelled, "cancelled") }
            let step = min(remaining, 0.05)
            SystemClock.sleep(seconds: step)
            remaining -= step
        }
    }

    /// Throws the error a failed response stands for, in words a person can act on.
    func requireSuccess(_ response: HTTPResponse, bucket: String, key: String?) throws(RemoteError) {
        guard !response.isSuccess else { return }
        let document = S3ErrorDocument(response.errorBody)
        let code = document?.code ?? ""
        // What the server says is repeated, but never a secret it may echo.
        let detail = configuration.redacted(
            document.map { ": \($0.code)\($0.message.isEmpty ? "" : " (\($0.message))")" } ?? "")
        let what = describe(bucket, key)
        switch (response.status, code) {
        case (_, "NoSuchBucket"):
            throw RemoteError(.noSuchBucket, "bucket '\(bucket)' does not exist at \(configuration.endpoint)")
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "InvalidToken"), (_, "ExpiredToken"),
            (_, "AuthorizationHeaderMalformed"):
            throw RemoteError(
                .credentialsRefused,
                "\(configuration.endpoint) refused the credentials\(detail); check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and AWS_REGION")
        case (403, "AccessDenied"):
            throw RemoteError(.accessDenied, "access denied to \(what)\(detail)")
        case (403, _):
            throw RemoteError(
                .credentialsRefused,
                "\(configuration.endpoint) refused the request for \(what) (HTTP 403\(detail)); check the credentials")
        case (404, _) where key == nil:
            throw RemoteError(.noSuchBucket, "bucket '\(bucket)' does not exist at \(configuration.endpoint)")
        default:
            throw RemoteError(.server, "\(what): HTTP \(response.status)\(detail)")
        }
    }

    func describe(_ bucket: String, _ key: String?) -> String {
        key.map { "s3://\(bucket)/\($0)" } ?? "s3://\(bucket)"
    }
}

/// A body held in memory (small objects: head records, manifests).
final class MemoryBody: RequestBody {
    private let bytes: [UInt8]
    private var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var length: Int64 { Int64(bytes.count) }
    var failure: (any Error)? { nil }
    func rewind() { position = 0 }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let count = min(buffer.count, bytes.count - position)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + position, byteCount: count)
        }
        position += count
        return count
    }
}

/// Collects a small response body in memory, refusing more than `limit` bytes.
final class MemorySink: ResumableSink {
    private(set) var bytes: [UInt8] = []
    private let limit: Int
    private(set) var failure: (any Error)?
    init(limit: Int) { self.limit = limit }
    var received: Int64 { Int64(bytes.count) }
    func receive(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count + chunk.count <= limit else {
            failure = RemoteError(.server, "the object is larger than the \(limit) bytes expected")
            return false
        }
        bytes.append(contentsOf: chunk)
        return true
    }
}
