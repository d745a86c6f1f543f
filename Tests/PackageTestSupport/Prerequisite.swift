import Foundation
import Glibc
import PackageCore

/// What some tests need from the machine — root, a tmpfs, an XFS loop image, the immutable
/// flag, `setpriv`, programs to compare with — probed once per process.
///
/// A test that needs one says so in its traits, `Prerequisite.needs(…)` or
/// `Prerequisite.programs(…)` (PackageTestTraits; `.enabled(if: Prerequisite.runs(…))`
/// underneath): where it is missing
/// the test is a visible skip (Swift Testing prints why), never a pass; in CI (`CI=true`,
/// the machine `.ci/run` provisions with `Scripts/dependencies.sh`) it runs anyway, so a
/// missing prerequisite fails there through the test's own `#require` — and
/// `Prerequisite.missing` names every one that is absent, for the one test that fails in CI
/// when any is.
public enum Prerequisite {
    /// Whether this run is CI's, where every prerequisite must be present.
    public static let inCI = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Whether a test needing `available` runs: where it is, and always in CI.
    public static func runs(_ available: Bool) -> Bool { available || inCI }

    /// This process runs as root.
    public static let isRoot: Bool = getuid() == 0

    /// The programs the tests compare with or drive: what `Scripts/dependencies.sh` installs.
    public static let programNames = [
        "zip", "unzip", "7z", "bsdtar", "python3", "ldd", "setpriv", "chattr", "mkfs.xfs", "mount", "umount",
        "script", "git", "rsync", "xxhsum", "zsh", "fish", "groff", "man", "findmnt",
    ]

    /// Every prerequisite absent from this machine, by name (empty where all are there).
    public static var missing: [String] {
        var missing = programNames.filter { which($0) == nil }
        for (name, present) in [
            ("root", isRoot), ("a tmpfs mount", canMountTmpfs), ("an XFS loop mount", canMountXFS),
            ("chattr +i", canMakeImmutable), ("running as nobody", canRunAsNobody),
        ] where !present {
            missing.append(name)
        }
        return missing
    }

    /// A tmpfs can be mounted (root, and the kernel allows it here).
    public static let canMountTmpfs: Bool = {
        guard getuid() == 0, let directory = try? TemporaryDirectory("tmpfs-probe") else { return false }
        guard mount("tmpfs", directory.path, "tmpfs", 0, "size=1m") == 0 else { return false }
        umount2(directory.path, 2)
        return true
    }()

    /// An XFS image can be made and loop-mounted (root, mkfs.xfs, a loop device).
    public static let canMountXFS: Bool = { LoopMount.xfs() != nil }()

    /// `chattr +i` works on a folder here (root, chattr, a file system with the flag).
    public static let canMakeImmutable: Bool = {
        guard getuid() == 0, let chattr = which("chattr"), let directory = try? TemporaryDirectory("chattr-probe")
        else { return false }
        let probe = directory.url("probe")
        guard (try? Files.makeDirectory(probe)) != nil,
            (try? runProgram(chattr, ["+i", probe]).status) == 0
        else { return false }
        _ = try? runProgram(chattr, ["-i", probe])
        return true
    }()

    /// This process can run programs as `nobody` (root and `setpriv`).
    public static let canRunAsNobody: Bool = getuid() == 0 && which("setpriv") != nil
}
