import Glibc
import PackageCore

/// The credentials every S3 request is signed with.
public struct S3Credentials: Sendable, Equatable {
    /// The key's id (`AWS_ACCESS_KEY_ID`), sent in every request.
    public var accessKeyID: String
    /// The secret (`AWS_SECRET_ACCESS_KEY`): signs, never sent.
    public var secretAccessKey: String
    /// Temporary credentials (STS) come with a session token, sent as `x-amz-security-token`.
    public var sessionToken: String?

    /// Credentials from their parts (``S3Configuration/fromEnvironment(_:endpoint:profile:)`` reads them from the environment).
    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// AWS Signature Version 4 for S3, computed here on libcrypto's HMAC-SHA256 rather than by
/// libcurl's `CURLOPT_AWS_SIGV4`: curl 7.88 (Debian 12) signs neither the payload hash S3
/// requires (`x-amz-content-sha256`) nor the conditional headers, and SeaweedFS refuses
/// its signatures on PUTs with a body (tried). Small objects carry their real payload
/// SHA-256, which AWS checks (SeaweedFS does not: tried); packs are sent as
/// `UNSIGNED-PAYLOAD` and checked blob by blob on both sides instead.
///
/// The canonical request is: method, URI (each segment percent-encoded, `/` kept), the
/// query sorted by name, the signed headers (lowercase names, sorted, trimmed values), the
/// list of their names, and the payload hash; the string to sign chains the date, the
/// scope and its SHA-256; the key is HMAC-chained from the secret, date, region, "s3".
struct SigV4Signer: Sendable {
    var credentials: S3Credentials
    var region: String
    var service = "s3"

    /// The payload hash S3 accepts when the body is not hashed in the signature.
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// Returns `headers` plus the signing headers (`x-amz-date`, `x-amz-content-sha256`,
    /// `x-amz-security-token` when there is one, `Authorization`). Every header given is signed.
    /// - Parameters:
    ///   - path: the request's path, already percent-encoded as it is sent.
    ///   - query: name and value pairs, not yet encoded.
    ///   - host: the `Host` header value, exactly as sent.
    func sign(
        method: String, path: String, query: [(String, String)], host: String, headers: [(name: String, value: String)],
        payloadHash: String, time: time_t = time_t(SystemClock.secondsSinceEpoch)
    ) -> [(name: String, value: String)] {
        let (date, stamp) = Self.timestamps(time)
        var signed = headers.map { (name: $0.name.lowercased(), value: Self.trimmed($0.value)) }
        signed.append((name: "host", value: host))
        signed.append((name: "x-amz-date", value: stamp))
        signed.append((name: "x-amz-content-sha256", value: payloadHash))
        if let token = credentials.sessionToken { signed.append((name: "x-amz-security-token", value: token)) }
        signed.sort { $0.name < $1.name }
        let signedNames = signed.map(\.name).joined(separator: ";")
        let encodedQuery: [(name: String, value: String)] = query.map { (S3Encoding.encode($0.0), S3Encoding.encode($0.1)) }
        let sortedQuery = encodedQuery.sorted { (a, b) -> Bool in a.name == b.name ? a.value < b.value : a.name < b.name }
        let canonicalQuery = sortedQuery.map { $0.name + "=" + $0.value }.joined(separator: "&")
        let canonicalRequest = [
            method, path, canonicalQuery, signed.map { "\($0.name):\($0.value)\n" }.joined(), signedNames, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(date)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", stamp, scope, SHA256Digest.of(Array(canonicalRequest.utf8)).description,
        ].joined(separator: "\n")
        var key = HMACSHA256.authenticate(key: Array(("AWS4" + credentials.secretAccessKey).utf8), message: date)
        for part in [region, service, "aws4_request"] { key = HMACSHA256.authenticate(key: key, message: part) }
        let signature = Self.hex(HMACSHA256.authenticate(key: key, message: stringToSign))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedNames), Signature=\(signature)"
        var result = headers
        result.append((name: "Host", value: host))
        result.append((name: "x-amz-date", value: stamp))
        result.append((name: "x-amz-content-sha256", value: payloadHash))
        if let token = credentials.sessionToken { result.append((name: "x-amz-security-token", value: token)) }
        result.append((name: "Authorization", value: authorization))
        return result
    }

    /// "20261202" and "20261202T035050Z" for a time, in UTC.
    static func timestamps(_ time: time_t) -> (date: String, stamp: String) {
        var value = time
        var parts = tm()
        gmtime_r(&value, &parts)
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        let date = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))"
        return (date, "\(date)T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z")
    }

    /// A header value with outer spaces removed and inner runs of spaces folded, as SigV4 wants.
    static func trimmed(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

/// Percent-encoding as S3 and SigV4 want it (RFC 3986): unreserved characters kept, every
/// other byte of the UTF-8 encoding as `%XX` (uppercase).
enum S3Encoding {
    static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var result = [UInt8]()
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                result.append(byte)
            case UInt8(ascii: "/") where keepingSlashes:
                result.append(byte)
            default:
                result.append(UInt8(ascii: "%"))
                result.append(digits[Int(byte >> 4)])
                result.append(digits[Int(byte & 0xF)])
            }
        }
        return String(decoding: result, as: UTF8.self)
    }
}
