import PackageCore

/// The figures of a `--stats` report as a person reads them.
package enum StatisticsText {
    /// "1 file", "3 files": a count with its noun in the right number.
    package static func count(_ value: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(value) \(value == 1 ? singular : plural ?? singular + "s")"
    }

    /// A byte count as a person reads it, exact below 1 KiB: "820 B", "519.2 MiB (544435063 bytes)".
    static func bytes(_ value: Int64) -> String {
        value < 1024 ? "\(value) B" : "\(ByteCountText.describe(value)) (\(value) bytes)"
    }
}
