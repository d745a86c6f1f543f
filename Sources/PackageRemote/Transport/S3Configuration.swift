import Glibc
import PackageCore

/// How to reach a store: endpoint, addressing style, region, credentials, CA bundle, and
/// the transfer settings (parallelism, retries, timeouts).
public struct S3Configuration: Sendable {
    /// `scheme://host[:port]`, without a trailing slash.
    public var endpoint: String
    /// Path-style addressing (`ENDPOINT/BUCKET/KEY`): the default for an endpoint given
    /// explicitly (local servers, MinIO, SeaweedFS, Ceph); AWS's own endpoint uses
    /// virtual-hosted style (`BUCKET.s3.REGION.amazonaws.com/KEY`) unless the bucket has dots.
    public var pathStyle: Bool
    /// The region requests are signed for (`us-east-1` unless told; most local servers accept any).
    public var region: String
    /// The key every request is signed with.
    public var credentials: S3Credentials
    /// Parallelism, retries, timeouts, speed cap, CA bundle.
    public var transport: TransportSettings

    /// A configuration with every part given; ``fromEnvironment(_:endpoint:profile:)`` reads it as S3 tools do.
    public init(
        endpoint: String, pathStyle: Bool, region: String, credentials: S3Credentials,
        transport: TransportSettings = TransportSettings()
    ) {
        self.endpoint = endpoint
        self.pathStyle = pathStyle
        self.region = region
        self.credentials = credentials
        self.transport = transport
    }

    /// The configuration every S3 tool reads, in the AWS CLI's order of precedence.
    ///
    /// - Credentials: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`),
    ///   else the profile's `aws_access_key_id` + `aws_secret_access_key` (+
    ///   `aws_session_token`) from the credentials file, else from the config file.
    /// - Profile: `profile` (a `--profile` option), else `AWS_PROFILE`, else `default`; the
    ///   files: `AWS_SHARED_CREDENTIALS_FILE` (`~/.aws/credentials`) and `AWS_CONFIG_FILE`
    ///   (`~/.aws/config`). A profile asked for by name must exist in one of them.
    /// - Region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, `us-east-1`.
    /// - Endpoint: `endpoint` (the `--endpoint` option), `AWS_ENDPOINT_URL_S3`,
    ///   `AWS_ENDPOINT_URL`, the profile's services section `s3 = endpoint_url`, its own
    ///   `s3 = endpoint_url`, its `endpoint_url`, else AWS's own (for the region); the
    ///   environment's and the files' are skipped when `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS`
    ///   is `true`. An endpoint given this way is addressed path-style, unless the profile
    ///   says `s3 = addressing_style = virtual`.
    /// - CA bundle: `AWS_CA_BUNDLE`, the profile's `ca_bundle`.
    ///
    /// - Parameters:
    ///   - environment: the variables to read (the process's by default).
    ///   - override: an endpoint that wins over every other (`--endpoint`).
    ///   - profile: a profile name that wins over `AWS_PROFILE` (`--profile`).
    public static func fromEnvironment(
        _ environment: [String: String] = currentEnvironment(), endpoint override: String? = nil,
        profile: String? = nil
    ) throws(RemoteError) -> S3Configuration {
        func value(_ name: String) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        let shared = try AWSSharedConfiguration(environment: environment, profile: profile)
        let credentials: S3Credentials
        if let accessKey = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY"), profile == nil {
            credentials = S3Credentials(
                accessKeyID: accessKey, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
        } else if let fromFiles = try shared.credentials() {
            credentials = fromFiles
        } else {
            throw RemoteError(
                .configuration,
                "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                    + "or give the AWS profile '\(shared.profileName)' keys in '\(shared.credentialsPath)'")
        }
        let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? shared.region ?? "us-east-1"
        var transport = TransportSettings()
        if let bundle = value("AWS_CA_BUNDLE") ?? shared.certificateBundle {
            guard ProcessEnvironment.isReadable(bundle) else {
                throw RemoteError(.configuration, "cannot read the CA bundle '\(bundle)' (AWS_CA_BUNDLE or ca_bundle)")
            }
            transport.certificateBundle = bundle
        }
        let ignoreConfigured = value("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")?.lowercased() == "true"
        let configured = ignoreConfigured ? nil : value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") ?? shared.endpoint
        if let given = override ?? configured {
            let endpoint = try Self.normalisedEndpoint(given)
            return S3Configuration(
                endpoint: endpoint, pathStyle: shared.addressingStyle != "virtual", region: region,
                credentials: credentials, transport: transport)
        }
        return S3Configuration(
            endpoint: "https://s3.\(region).amazonaws.com", pathStyle: shared.addressingStyle == "path", region: region,
            credentials: credentials, transport: transport)
    }

    /// Checks an endpoint URL: http or https, a host, an optional port, nothing after.
    ///
    /// Credentials in it (`http://KEY:SECRET@host`) are refused without being repeated:
    /// the message shows the URL with its userinfo as `***` (`SecretRedaction`).
    static func normalisedEndpoint(_ text: String) throws(RemoteError) -> String {
        let shown = SecretRedaction.withoutUserinfo(text)
        var endpoint = Substring(text)
        while endpoint.hasSuffix("/") { endpoint = endpoint.dropLast() }
        guard endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://") else {
            throw RemoteError(.invalidLocation, "malformed endpoint '\(shown)': expected http://HOST[:PORT] or https://…")
        }
        let authority = endpoint.split(separator: "/", omittingEmptySubsequences: false).dropFirst(2).first ?? ""
        // An endpoint has no use for '@': one is userinfo, whatever stands around it.
        if endpoint.contains("@") {
            throw RemoteError(
                .invalidLocation,
                "malformed endpoint '\(shown)': credentials do not belong in the URL; "
                    + "give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        let hasPath = endpoint.split(separator: "/", omittingEmptySubsequences: false).count > 3
        guard !authority.isEmpty, !hasPath, !authority.contains("?") else {
            throw RemoteError(.invalidLocation, "malformed endpoint '\(shown)': expected http://HOST[:PORT] or https://…")
        }
        return String(endpoint)
    }

    /// `text` without this configuration's secret key or session token, nor any URL's
    /// userinfo: for messages that carry what a server or libcurl said.
    func redacted(_ text: String) -> String {
        SecretRedaction(secrets: [credentials.secretAccessKey] + (credentials.sessionToken.map { [$0] } ?? []))
            .apply(text)
    }

    /// The process's environment.
    public static func currentEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }

    /// The URL, `Host` header and path (as signed) of `key` in `bucket` (nil key: the bucket).
    func address(bucket: String, key: String?) -> (url: String, host: String, path: String) {
        let schemeEnd = endpoint.firstRange(of: "://")!.upperBound
        let scheme = String(endpoint[..<schemeEnd])
        let authority = String(endpoint[schemeEnd...])
        let encodedKey = key.map { S3Encoding.encode($0, keepingSlashes: true) }
        if pathStyle || bucket.contains(".") {
            let path = "/" + bucket + (encodedKey.map { "/" + $0 } ?? "/")
            return (scheme + authority + path, authority, path)
        }
        let host = bucket + "." + authority
        let path = "/" + (encodedKey ?? "")
        return (scheme + host + path, host, path)
    }
}

/// How transfers run: how many at once, how often and how long to retry, when to give up.
public struct TransportSettings: Sendable {
    /// Transfers in flight at once (the throttle).
    public var concurrency: Int = 4
    /// Attempts per request before giving up on a connection error, a 5xx or a throttle
    /// (429, 503 SlowDown); waits double from `retryDelay` (with jitter) between them.
    public var attempts: Int = 6
    /// The first wait between attempts, in seconds.
    public var retryDelay: Double = 0.25
    /// The longest single wait between attempts.
    public var maximumRetryDelay: Double = 8
    /// How long a connection may take to open before the attempt fails.
    public var connectTimeoutMilliseconds: Int = 10_000
    /// A transfer slower than ``minimumBytesPerSecond`` for this long is abandoned (and
    /// retried): a server trickling a body cannot hold a push or pull forever.
    public var stallTimeoutSeconds: Int = 30
    /// The low-speed limit: bytes per second a transfer must average over
    /// ``stallTimeoutSeconds`` (default 1 KiB; lowered to a quarter of
    /// ``maximumBytesPerSecond`` when that cap is lower).
    public var minimumBytesPerSecond: Int = 1024
    /// The deadline of one request, in seconds, however fast its bytes move (default 15
    /// minutes): a transfer still running then is abandoned (and retried). With a speed cap,
    /// a request whose bytes need longer at half the cap gets that long.
    public var transferTimeoutSeconds: Int = 900
    /// A cap on each transfer's speed, bytes per second, both ways (nil: none): a push or
    /// pull then uses at most `concurrency ×` this of the link.
    public var maximumBytesPerSecond: Int64?
    /// The CA bundle (`AWS_CA_BUNDLE`) for https endpoints; nil: the system's.
    public var certificateBundle: String?

    /// The defaults: 4 transfers, 6 attempts from 0.25 s, 10 s to connect, at least 1 KiB/s
    /// over 30 s, 15 minutes per request.
    public init() {}

    /// The low-speed limit in force: ``minimumBytesPerSecond``, below any speed cap.
    var effectiveMinimumBytesPerSecond: Int {
        let floor = max(1, minimumBytesPerSecond)
        guard let cap = maximumBytesPerSecond else { return floor }
        return Int(min(Int64(floor), max(1, cap / 4)))
    }

    /// The deadline of a request that moves `bytes` (sent or received; nil: unknown), in
    /// milliseconds: ``transferTimeoutSeconds``, or what the bytes need at half the speed
    /// cap when that is longer.
    func deadlineMilliseconds(forBytes bytes: Int64?) -> Int {
        let base = Int64(max(1, transferTimeoutSeconds)) * 1000
        guard let cap = maximumBytesPerSecond, cap > 0, let bytes, bytes > 0 else { return Int(base) }
        let needed = min(bytes, 1 << 40) * 2000 / cap
        return Int(min(max(base, needed), Int64(Int32.max)))
    }
}
