import PackageCore

/// What `push`, `pull`, `log` and `diff … s3://…` share in pkgtool itself: their options and
/// help, and what names a remote. Their work is in `PkgToolRemoteCLI` (`pkgtool-remote`).
package enum RemoteCommandSupport {
    package static let endpoint = OptionSpec(
        "endpoint", .value(placeholder: "URL"),
        help: "the S3 endpoint (default: AWS_ENDPOINT_URL, the profile's endpoint_url, else AWS)")
    package static let profile = OptionSpec(
        "profile", .value(placeholder: "NAME"),
        help: "the AWS profile of ~/.aws/credentials and ~/.aws/config to use (default: AWS_PROFILE, else default)")
    package static let transfers = OptionSpec(
        "transfers", .value(placeholder: "N"), help: "transfers in flight at once (1–64, default 4)")

    package static let retries = OptionSpec(
        "retries", .value(placeholder: "N"), help: "retries of a request after a connection error, a timeout, a 5xx or a 429/SlowDown (0–20, default 5)")
    package static let limitRate = OptionSpec(
        "limit-rate", .value(placeholder: "BYTES"), help: "cap each transfer at BYTES per second (suffixes k, m)")
    package static let speedLimit = OptionSpec(
        "speed-limit", .value(placeholder: "BYTES"),
        help: "abandon (and retry) a transfer slower than BYTES per second over --speed-time (suffixes k, m; default 1k)")
    package static let speedTime = OptionSpec(
        "speed-time", .value(placeholder: "SECONDS"), help: "the window of --speed-limit (1–3600, default 30)")
    package static let maxTime = OptionSpec(
        "max-time", .value(placeholder: "SECONDS"),
        help: "abandon (and retry) a single request after SECONDS, however it moves (1–86400, default 900)")

    /// The transfer options every sync command takes: their limits and deadline included.
    package static let transferOptions = [transfers, limitRate, speedLimit, speedTime, maxTime, retries]

    package static let deadlineHelp = """
        No transfer can hang: one slower than --speed-limit (1 KiB/s) for --speed-time (30 s),
        or still running after --max-time (15 minutes; longer when --limit-rate needs it), is
        abandoned and retried; an answer longer than what was asked for is cut off and refused.
        """

    package static let environmentHelp = """
        The store is reached as the AWS CLI reaches it: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN, AWS_REGION (or AWS_DEFAULT_REGION), AWS_ENDPOINT_URL (--endpoint
        overrides it; path-style addressing for such endpoints), AWS_CA_BUNDLE; where they are
        unset, the profile (--profile, AWS_PROFILE, else default) of ~/.aws/credentials and
        ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE): its keys, region,
        endpoint_url and ca_bundle. What this
        machine remembers about remotes lives in PKGTOOL_CACHE_DIR (default ~/.cache/pkgtool).
        The transfers run in pkgtool-remote, which pkgtool runs for them: keep it beside
        pkgtool (or on PATH).
        """

    /// Whether a command-line argument names a remote (`s3://…`) rather than a local path.
    package static func isRemote(_ text: String) -> Bool { text.hasPrefix("s3://") }
}
