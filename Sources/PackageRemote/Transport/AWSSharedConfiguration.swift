import Glibc
import PackageCore

/// The AWS shared configuration files (`~/.aws/credentials` and `~/.aws/config`), read the
/// way the AWS CLI reads them, so that a person who set up the AWS CLI, restic or rclone
/// needs nothing more for pkgtool.
///
/// Both are INI files of sections of `key = value` lines; a key with an empty value opens
/// a nested block of indented lines (`s3 =` then `  endpoint_url = …`). The credentials file
/// names a profile `[NAME]`; the config file `[default]` or `[profile NAME]`, and keeps
/// shared endpoint settings in `[services NAME]` sections a profile points at.
/// Only static keys are read: a profile that gets its keys by running something
/// (`role_arn`, `credential_process`, SSO) is refused with a line saying so.
struct AWSSharedConfiguration {
    /// One profile's settings, merged from both files (the credentials file's keys win).
    struct Profile {
        var values: [String: String] = [:]
        /// Nested blocks: `s3 = { endpoint_url, addressing_style }`.
        var blocks: [String: [String: String]] = [:]
    }

    /// Files larger than this are not configuration: refused rather than read.
    static let sizeLimit = 1 << 20

    /// The profile's name: `AWS_PROFILE`, else `AWS_DEFAULT_PROFILE`, else `default`.
    let profileName: String
    /// Whether the name was asked for (a missing profile is then an error, not "none").
    let profileNamed: Bool
    /// The profile, or nil when neither file has it.
    let profile: Profile?
    /// The `[services NAME]` section the profile's `services` key names, if any.
    let services: Profile?
    /// The paths read (for messages): credentials file, config file.
    let credentialsPath: String
    let configPath: String

    /// Reads both files the environment points at (`AWS_SHARED_CREDENTIALS_FILE`,
    /// `AWS_CONFIG_FILE`, defaults under `$HOME/.aws`); a file that does not exist is empty.
    /// `profile` (a `--profile` option) overrides `AWS_PROFILE`.
    init(environment: [String: String], profile requested: String? = nil) throws(RemoteError) {
        func value(_ name: String) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        let home = value("HOME")
        func expanded(_ path: String) -> String {
            guard path == "~" || path.hasPrefix("~/"), let home else { return path }
            return home + path.dropFirst()
        }
        credentialsPath = expanded(value("AWS_SHARED_CREDENTIALS_FILE") ?? "~/.aws/credentials")
        configPath = expanded(value("AWS_CONFIG_FILE") ?? "~/.aws/config")
        let named = requested ?? value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        profileName = named ?? "default"
        profileNamed = named != nil
        let credentialsFile = try Self.sections(ofFileAt: credentialsPath, usable: home != nil || !credentialsPath.hasPrefix("~"))
        let configFile = try Self.sections(ofFileAt: configPath, usable: home != nil || !configPath.hasPrefix("~"))
        let configName = profileName == "default" ? "default" : "profile " + profileName
        var merged: Profile?
        for section in [configFile[configName], credentialsFile[profileName]] {
            guard let section else { continue }
            var profile = merged ?? Profile()
            profile.values.merge(section.values) { $1 }
            profile.blocks.merge(section.blocks) { $1 }
            merged = profile
        }
        profile = merged
        services = merged?.values["services"].flatMap { configFile["services " + $0] }
        if profileNamed && merged == nil {
            throw RemoteError(
                .configuration, "the AWS profile '\(profileName)' is in neither '\(credentialsPath)' nor '\(configPath)'")
        }
    }

    /// The profile's static keys, or nil when it has none; throws when it names a way of
    /// getting keys that pkgtool does not run.
    func credentials() throws(RemoteError) -> S3Credentials? {
        guard let values = profile?.values else { return nil }
        if let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"], !id.isEmpty, !secret.isEmpty {
            return S3Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"])
        }
        let unsupported = ["role_arn", "credential_process", "sso_session", "sso_start_url", "web_identity_token_file"]
        if let key = unsupported.first(where: { values[$0] != nil }) {
            throw RemoteError(
                .configuration,
                "the AWS profile '\(profileName)' gets its keys through '\(key)', which pkgtool does not run; "
                    + "give it aws_access_key_id and aws_secret_access_key, or export them (aws configure export-credentials)")
        }
        return nil
    }

    /// The profile's region.
    var region: String? { nonEmpty(profile?.values["region"]) }

    /// The profile's S3 endpoint: its services section's `s3 = endpoint_url`, else its own
    /// `s3 = endpoint_url`, else its `endpoint_url`; none when `ignore_configured_endpoint_urls`.
    var endpoint: String? {
        guard profile?.values["ignore_configured_endpoint_urls"]?.lowercased() != "true" else { return nil }
        return nonEmpty(services?.blocks["s3"]?["endpoint_url"]) ?? nonEmpty(profile?.blocks["s3"]?["endpoint_url"])
            ?? nonEmpty(profile?.values["endpoint_url"])
    }

    /// The profile's `s3 = addressing_style` (`path`, `virtual` or `auto`).
    var addressingStyle: String? { nonEmpty(profile?.blocks["s3"]?["addressing_style"])?.lowercased() }

    /// The profile's `ca_bundle`.
    var certificateBundle: String? { nonEmpty(profile?.values["ca_bundle"]) }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    // MARK: Reading

    /// The sections of the INI file at `path`, by their header's text; empty when the file
    /// does not exist (or `usable` is false: a `~` path with no `HOME` to expand it).
    static func sections(ofFileAt path: String, usable: Bool) throws(RemoteError) -> [String: Profile] {
        guard usable else { return [:] }
        let read: (kind: FileKind, size: Int64, bytes: [UInt8])
        do throws(FileSystemError) {
            let file = try FileDescriptor.open(path, options: [.nonBlocking])
            let status = try file.status()
            var buffer: [UInt8] = []
            if status.kind == .regular && status.size <= Int64(sizeLimit) {
                buffer = [UInt8](repeating: 0, count: sizeLimit + 1)
                let result = buffer.withUnsafeMutableBytes { raw in
                    Result { () throws(FileSystemError) -> Int in try file.readFully(into: raw, at: 0) }
                }
                let count = try result.get()
                buffer.removeSubrange(min(count, sizeLimit + 1)...)
            }
            read = (status.kind, status.size, buffer)
        } catch where error.errno == .noSuchFileOrDirectory || error.errno == .notDirectory {
            return [:]
        } catch {
            throw RemoteError(.configuration, "cannot read the AWS configuration: \(error)")
        }
        guard read.kind == .regular else { throw RemoteError(.configuration, "'\(path)' is not a regular file") }
        guard read.size <= Int64(sizeLimit), read.bytes.count <= sizeLimit else {
            throw RemoteError(.configuration, "'\(path)' is larger than \(sizeLimit) bytes: not an AWS configuration file")
        }
        let bytes = read.bytes
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RemoteError(.configuration, "'\(path)' is not UTF-8 text")
        }
        return try parse(text, path: path)
    }

    /// Parses INI text: `[section]` headers, `key = value` lines (keys lowercased), full-line
    /// comments (`#`, `;`), and nested blocks (`key =` followed by indented `key = value`).
    static func parse(_ text: String, path: String) throws(RemoteError) -> [String: Profile] {
        var sections: [String: Profile] = [:]
        var current: String?
        var block: String?
        for (number, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let indented = rawLine.first == " " || rawLine.first == "\t"
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]") else {
                    throw RemoteError(.configuration, "'\(path)' line \(number + 1): a section header without ']'")
                }
                let name = line.dropFirst().dropLast().trimmingWhitespace().split(whereSeparator: { $0 == " " || $0 == "\t" })
                    .joined(separator: " ")
                current = name
                block = nil
                if sections[name] == nil { sections[name] = Profile() }
                continue
            }
            guard let section = current else {
                throw RemoteError(.configuration, "'\(path)' line \(number + 1): a setting before any [section]")
            }
            guard let equals = line.firstIndex(of: "=") else {
                throw RemoteError(.configuration, "'\(path)' line \(number + 1): expected 'name = value'")
            }
            let key = line[..<equals].trimmingWhitespace().lowercased()
            let value = line[line.index(after: equals)...].trimmingWhitespace()
            if indented, let open = block {
                sections[section]!.blocks[open, default: [:]][key] = value
            } else if value.isEmpty {
                block = key
                sections[section]!.blocks[key, default: [:]] = [:]
            } else {
                block = nil
                sections[section]!.values[key] = value
            }
        }
        return sections
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and carriage returns.
    fileprivate func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
