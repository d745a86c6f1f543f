import PackageCore
import PackageZip

/// What `unpack`, `verify` and `ls` share: the limit options and functions the lead's
/// `verify` and `diff` can call for the zip side of a comparison.
enum ZipCommandSupport {
    static let limitOptions: [OptionSpec] = [
        OptionSpec("max-entries", .value(placeholder: "N"), help: "refuse archives with more entries (default 1000000)"),
        OptionSpec(
            "max-size", .value(placeholder: "BYTES"),
            help: "refuse archives that inflate to more bytes in all, or in one entry (default 68719476736, 64 GiB)"),
        OptionSpec(
            "max-ratio", .value(placeholder: "R"),
            help: "refuse archives past 64 MiB that expand more than R:1 (default 1100)"),
    ]

    static func limits(_ arguments: ParsedArguments, usageLine: String) throws(UsageError) -> ZipLimits {
        var limits = ZipLimits.default
        limits.maximumEntries = try arguments.integer(
            "max-entries", in: 0...Int.max, default: limits.maximumEntries, usageLine: usageLine)
        let size = try arguments.integer(
            "max-size", in: 0...Int.max, default: Int(limits.maximumTotalSize), usageLine: usageLine)
        limits.maximumTotalSize = Int64(size)
        limits.maximumEntrySize = min(limits.maximumEntrySize, Int64(size))
        if let text = arguments.value("max-ratio") {
            guard let ratio = Double(text), ratio >= 1 else {
                throw UsageError("--max-ratio expects a number of at least 1, not '\(text)'", usageLine: usageLine)
            }
            limits.maximumRatio = ratio
        }
        return limits
    }

    /// Whether a command-line path names an archive rather than a package: a regular file
    /// (following links, as command-line paths do). `ZipArchive.open` then says whether it
    /// really is one ("not a ZIP archive", exit 1).
    static func isArchivePath(_ path: String) -> Bool {
        (try? FileSystem.status(path, followSymlinks: true).kind) == .regular
    }

    /// Verifies one archive; prints a summary line (or a JSON record). The lead's
    /// directory-aware `verify` dispatches here when `ZipArchive.looksLikeArchive(path)`.
    static func verifyArchive(
        _ path: String, limits: ZipLimits, workers: Int, meter: ProgressMeter? = nil
    ) throws -> (archive: ZipArchive, report: ZipArchive.VerifyReport) {
        let archive = try ZipArchive.open(path, limits: limits)
        var progress: (@Sendable (Int64) -> Void)?
        if let meter {
            meter.setTotal(archive.entries.reduce(Int64(0)) { $0 + ($1.kind == .directory ? 0 : $1.uncompressedSize) })
            progress = { meter.add($0) }
        }
        let report = try archive.verify(workers: workers, progress: progress)
        return (archive, report)
    }
}
