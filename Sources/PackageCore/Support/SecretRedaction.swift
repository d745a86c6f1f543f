/// Keeps secrets out of everything pkgtool prints: error and warning lines, progress, JSON,
/// the reports of a library call (Specs/remote.md, "Secrets").
///
/// Two rules: the userinfo of a URL (`scheme://user:password@host`) is never repeated, and
/// the values of the secret variables (`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`) are
/// replaced by `***` wherever they appear, whatever put them there (an argument echoed, a
/// server's message, a libcurl error).
package struct SecretRedaction: Sendable {
    /// What stands for a secret removed.
    package static let mask = "***"
    /// The environment variables whose values are secret.
    package static let secretVariables = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]
    /// Shorter values are not scrubbed: replacing every "a" would garble output and hide
    /// nothing a person could not guess.
    package static let shortestSecret = 6

    /// The secret values to scrub, longest first (one may contain another).
    package let secrets: [String]

    /// Redaction of `secrets` (values shorter than ``shortestSecret`` are ignored).
    package init(secrets: [String]) {
        self.secrets = Array(Set(secrets.filter { $0.utf8.count >= Self.shortestSecret }))
            .sorted { $0.utf8.count > $1.utf8.count }
    }

    /// Redaction of the values of ``secretVariables`` in `environment`.
    package init(environment: [String: String]) {
        self.init(secrets: Self.secretVariables.compactMap { environment[$0] })
    }

    /// `text` with every URL's userinfo and every secret value replaced by `***`.
    /// - Complexity: O(length × secrets); nothing is copied when there is nothing to redact.
    package func apply(_ text: String) -> String {
        var result = Self.withoutUserinfo(text)
        for secret in secrets where result.contains(secret) {
            result = result.replacing(secret, with: Self.mask)
        }
        return result
    }

    /// `text` with the userinfo of every URL in it replaced by `***`: in `s3://AKIA:SECRET@bucket/p`
    /// or `http://user:pass@host:8333`, everything between `://` and the last `@` before the
    /// URL ends (a space, a quote, `<` or `>`), when that stretch has no `/` (an authority)
    /// or has a `:` (a secret key may hold `/`, which ends no authority a person typed).
    /// A prefix such as `s3://bucket/a@b` is left alone.
    package static func withoutUserinfo(_ text: String) -> String {
        guard text.contains("@"), text.contains("://") else { return text }
        var result = ""
        var rest = Substring(text)
        while let separator = rest.firstRange(of: "://") {
            result += rest[..<separator.upperBound]
            let url = rest[separator.upperBound...]
            let end =
                url.firstIndex { character in
                    character == "'" || character == "\"" || character.isWhitespace || character == "<" || character == ">"
                } ?? url.endIndex
            if let at = url[..<end].lastIndex(of: "@"), !url[..<at].contains("/") || url[..<at].contains(":") {
                result += mask
                rest = url[at...]
            } else {
                rest = url
            }
        }
        return result + rest
    }
}
