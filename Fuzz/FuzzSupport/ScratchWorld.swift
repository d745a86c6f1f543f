import Glibc

/// The scratch package and the canaries around it, for one fuzzer process.
///
///     W/cwd/                     the working directory while pkgtool's code runs: stays empty
///     W/top-canary, W/top-dir/   in the package's grandparent
///     W/source/                  what a save copies into the package (never written)
///     W/outer/canary, canary-dir/  beside the package
///     W/outer/evil-*             metadata outside the package, for the layouts that link to it
///     W/outer/pkg/               the package: files, folders, links pointing out of it,
///                                and `.pkgtool` as the input says
///     /tmp/pkgtool-fuzz-canary/  at a fixed absolute path, so that inputs can name it
///
/// Everything but `W/outer/pkg` is outside the package: `outsideState()` describes it to
/// the byte and the nanosecond, before and after each execution.
public struct ScratchWorld {
    public static let absoluteCanary = "/tmp/pkgtool-fuzz-canary"
    public static let deepCanary: [UInt8] = Array("deep canary\n".utf8)

    public let base: String
    public var outer: String { base + "/outer" }
    public var package: String { outer + "/pkg" }
    public var source: String { base + "/source" }
    public var workingDirectory: String { base + "/cwd" }

    /// Makes the world once per process (the package itself comes with each input), in
    /// `scratch/pkgtool-fuzz-LABEL-PID`.
    public init(scratch: String, label: String = "metadata") {
        base = scratch + "/pkgtool-fuzz-\(label)-\(getpid())"
        ScratchFiles.removeTree(base)
        ScratchFiles.makeDirectory(scratch)
        for directory in [base, workingDirectory, base + "/top-dir", outer, outer + "/canary-dir", outer + "/canary-dir/sub"] {
            ScratchFiles.makeDirectory(directory)
        }
        ScratchFiles.writeFile(base + "/top-canary", Array("top canary\n".utf8))
        ScratchFiles.writeFile(base + "/top-dir/inner", Array("inner canary\n".utf8), permissions: 0o600)
        ScratchFiles.writeFile(outer + "/canary", Array("beside canary\n".utf8))
        ScratchFiles.writeFile(outer + "/canary-dir/secret", Array("secret canary\n".utf8), permissions: 0o640)
        ScratchFiles.writeFile(outer + "/canary-dir/sub/deep", Self.deepCanary)
        // Shared by every fuzzer process (parallel jobs): made when missing, never changed.
        ScratchFiles.makeDirectory(Self.absoluteCanary)
        ScratchFiles.makeDirectory(Self.absoluteCanary + "/sub")
        for (name, text) in [("secret", "absolute canary\n"), ("sub/deep", "deep canary\n")] {
            var status = stat()
            if lstat(Self.absoluteCanary + "/" + name, &status) != 0 {
                ScratchFiles.writeFile(Self.absoluteCanary + "/" + name, Array(text.utf8))
            }
        }
        // The source of saves: the package's own tree, except that where the package has a
        // link leading out, the source has a real folder holding a copy of what lies there.
        Self.makeContent(in: source)
        ScratchFiles.makeDirectory(source + "/out-link")
        ScratchFiles.makeDirectory(source + "/out-link/sub")
        ScratchFiles.writeFile(source + "/out-link/sub/deep", Self.deepCanary)
    }

    /// The content shared by the package and the source.
    private static func makeContent(in root: String) {
        for directory in [root, root + "/dir", root + "/dir/sub", root + "/empty"] { ScratchFiles.makeDirectory(directory) }
        ScratchFiles.writeFile(root + "/a.txt", Array("alpha\n".utf8))
        ScratchFiles.writeFile(root + "/b.bin", (0..<256).map { UInt8($0) }, permissions: 0o755)
        ScratchFiles.writeFile(root + "/dir/c.txt", Array("gamma\n".utf8), permissions: 0o600)
        ScratchFiles.makeSymbolicLink(root + "/link", target: "a.txt")
    }

    /// A fresh package (and fresh outside metadata), without `.pkgtool`.
    public func resetPackage() {
        for leftover in ["pkg", "evil-meta", "evil-tmp", "evil-journal"] { ScratchFiles.removeTree(outer + "/" + leftover) }
        Self.makeContent(in: package)
        ScratchFiles.makeSymbolicLink(package + "/out-link", target: "../canary-dir")
        ScratchFiles.makeSymbolicLink(package + "/abs-link", target: Self.absoluteCanary)
        ScratchFiles.makeSymbolicLink(package + "/dir/up-link", target: "../../canary")
    }

    // MARK: The outside, described

    /// One line per entry outside the package: path, type, mode, owner, size, link count,
    /// inode, modification and change times (ns), and the bytes of files and link targets.
    /// The package's parent folder's own times are left out: saves make and remove
    /// siblings there (and must leave none).
    public func outsideState() -> [String] {
        var lines: [String] = []
        describe(base, as: "W", into: &lines)
        describe(Self.absoluteCanary, as: "ABS", into: &lines)
        return lines
    }

    /// Stops with a finding when the outside changed between `before` and `after` (two
    /// `outsideState()`s): what went, what came. `inside` names what was fuzzed (DEST, the
    /// scratch package).
    public static func requireUnchanged(_ before: [String], _ after: [String], outside inside: String) {
        guard before != after else { return }
        let gone = before.filter { !after.contains($0) }
        let came = after.filter { !before.contains($0) }
        fatalError(
            "FINDING: the outside of \(inside) changed\n  before: \(gone.joined(separator: "\n          "))\n  after:  \(came.joined(separator: "\n          "))"
        )
    }

    private func describe(_ path: String, as shown: String, into lines: inout [String]) {
        var status = stat()
        guard lstat(path, &status) == 0 else {
            lines.append("\(shown) missing")
            return
        }
        let type = status.st_mode & S_IFMT
        var line = "\(shown) mode \(String(status.st_mode, radix: 8)) uid \(status.st_uid) gid \(status.st_gid)"
        if path != outer && path != base {
            line += " ino \(status.st_ino) nlink \(status.st_nlink) size \(status.st_size)"
            line += " mtime \(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec) ctime \(status.st_ctim.tv_sec).\(status.st_ctim.tv_nsec)"
        }
        switch type {
        case S_IFREG: line += " bytes \(Self.fingerprint(ofFile: path))"
        case S_IFLNK:
            var target = [CChar](repeating: 0, count: 4097)
            let count = readlink(path, &target, 4096)
            line += " -> \(String(decoding: target.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self))"
        default: break
        }
        lines.append(line)
        guard type == S_IFDIR else { return }
        for name in ScratchFiles.names(in: path) where !(path == outer && name == "pkg") {
            describe(path + "/" + name, as: shown + "/" + name, into: &lines)
        }
    }

    /// FNV-1a of a file's bytes (the harness keeps its oracle apart from PackageCore).
    private static func fingerprint(ofFile path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return "unreadable" }
        defer { close(descriptor) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            total += count
            for byte in buffer[..<count] { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        return "\(total):\(String(hash, radix: 16))"
    }
}
