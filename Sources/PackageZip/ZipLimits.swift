/// Bounds an archive must stay within to be read, verified or extracted.
///
/// Checked on the central directory before any data is read or written, and again while
/// inflating (no entry ever inflates past its declared size). The defaults admit every
/// honest package we know of; lower them for untrusted input (Specs/zip.md, "Limits").
public struct ZipLimits: Sendable, Equatable {
    /// Most entries (files, links and directories, counting the directories their paths
    /// imply: each is created on extraction).
    public var maximumEntries: Int
    /// Most bytes all entries inflate to, together.
    public var maximumTotalSize: Int64
    /// Most bytes one entry inflates to.
    public var maximumEntrySize: Int64
    /// Most uncompressed bytes per compressed byte, over the whole archive, once the total
    /// passes `ratioThreshold` (a small archive of zeros may have any ratio).
    public var maximumRatio: Double
    /// The total uncompressed size below which the ratio is not checked.
    public var ratioThreshold: Int64
    /// Longest entry path in bytes, without a directory's trailing "/". The default, 4,095,
    /// is PATH_MAX (4,096) less its NUL: the longest path the kernel takes relative to the
    /// destination, which extraction opens by descriptor (its own path does not count).
    public var maximumNameLength: Int
    /// Longest symbolic-link target, in bytes: 4,095 by default, the most `symlinkat`
    /// takes (PATH_MAX with the NUL; ENAMETOOLONG beyond).
    public var maximumLinkTargetLength: Int

    /// Limits; every parameter is the property of the same name, the defaults those of `default`.
    public init(
        maximumEntries: Int = 1_000_000, maximumTotalSize: Int64 = 64 << 30, maximumEntrySize: Int64 = 64 << 30,
        maximumRatio: Double = 1100, ratioThreshold: Int64 = 64 << 20, maximumNameLength: Int = 4095,
        maximumLinkTargetLength: Int = 4095
    ) {
        self.maximumEntries = maximumEntries
        self.maximumTotalSize = maximumTotalSize
        self.maximumEntrySize = maximumEntrySize
        self.maximumRatio = maximumRatio
        self.ratioThreshold = ratioThreshold
        self.maximumNameLength = maximumNameLength
        self.maximumLinkTargetLength = maximumLinkTargetLength
    }

    /// The defaults: 1,000,000 entries, 64 GiB in all and per entry, ratio 1,100:1 past
    /// 64 MiB (deflate cannot honestly exceed about 1,032:1), paths of 4,095 bytes.
    public static let `default` = ZipLimits()
}
