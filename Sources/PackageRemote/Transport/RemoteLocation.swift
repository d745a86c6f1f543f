import PackageCore

/// Where a remote lives in a store: `s3://BUCKET/PREFIX`.
///
/// The prefix is a key prefix without leading or trailing slash (empty: the bucket's top);
/// every object of the remote is named `PREFIX/…`.
public struct RemoteLocation: Sendable, Hashable, CustomStringConvertible {
    /// The bucket's name.
    public var bucket: String
    /// The key prefix, without leading or trailing slash; empty for the bucket's top.
    public var prefix: String

    /// A location from its parts, taken as they are (``init(parsing:)`` checks them).
    public init(bucket: String, prefix: String) {
        self.bucket = bucket
        self.prefix = prefix
    }

    /// Parses `s3://BUCKET[/PREFIX][/]`.
    ///
    /// Bucket names follow S3's rules (3 to 63 characters: lowercase letters, digits, dots and
    /// hyphens, beginning and ending with a letter or digit). The prefix may hold any UTF-8
    /// but no empty, `.` or `..` segment and no control character, and at most 512 bytes.
    public init(parsing text: String) throws(RemoteError) {
        // Never repeated with credentials in it (s3://KEY:SECRET@bucket/…).
        let shown = SecretRedaction.withoutUserinfo(text)
        func refuse(_ why: String) -> RemoteError {
            RemoteError(.invalidLocation, "malformed remote '\(shown)': \(why) (expected s3://BUCKET/PREFIX)")
        }
        guard text.hasPrefix("s3://") else { throw refuse("it does not start with s3://") }
        var rest = Substring(text.dropFirst(5))
        // Nothing of the URL is repeated then (a bucket name made of part of a secret).
        if rest.prefix(while: { $0 != "/" }).contains("@") || shown != text {
            throw refuse(
                "credentials do not belong in the URL; give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        let slash = rest.firstIndex(of: "/")
        let bucket = String(slash.map { rest[..<$0] } ?? rest)
        let prefix = slash.map { String(rest[rest.index(after: $0)...]) } ?? ""
        guard !bucket.isEmpty else { throw refuse("the bucket name is empty") }
        guard (3...63).contains(bucket.utf8.count) else { throw refuse("a bucket name has 3 to 63 characters") }
        let allowed = bucket.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
        }
        guard allowed else {
            throw refuse("bucket '\(bucket)' may hold only lowercase letters, digits, dots and hyphens")
        }
        guard let first = bucket.utf8.first, let last = bucket.utf8.last,
            RemoteLocation.isAlphanumeric(first), RemoteLocation.isAlphanumeric(last)
        else { throw refuse("bucket '\(bucket)' must begin and end with a letter or a digit") }
        if !prefix.isEmpty {
            guard prefix.utf8.count <= 512 else { throw refuse("the prefix is longer than 512 bytes") }
            for segment in prefix.split(separator: "/", omittingEmptySubsequences: false) {
                if segment.isEmpty { throw refuse("the prefix has an empty segment ('//')") }
                if segment == "." || segment == ".." { throw refuse("the prefix has a '\(segment)' segment") }
            }
            if prefix.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw refuse("the prefix holds a control character")
            }
        }
        self.init(bucket: bucket, prefix: prefix)
    }

    /// The key of `name` inside the remote: `PREFIX/name`.
    func key(_ name: String) -> String { prefix.isEmpty ? name : prefix + "/" + name }

    /// `s3://BUCKET/PREFIX`, as it would be typed.
    public var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
