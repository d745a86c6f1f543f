import Glibc

/// The harness's own file operations, in plain libc: the oracle must not lean on the code
/// it judges. Any failure here is the harness's, not a finding: it stops with a message.
public enum ScratchFiles {
    /// The fuzzer's name, for the harness's own error lines.
    nonisolated(unsafe) public static var label = "pkgtool-fuzz"

    public static func fail(_ message: String) -> Never {
        let line = Array("\(label): \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(2)
    }

    public static func makeDirectory(_ path: String, permissions: mode_t = 0o755) {
        if mkdir(path, permissions) != 0 && errno != EEXIST { fail("mkdir \(path): \(String(cString: strerror(errno)))") }
    }

    public static func writeFile(_ path: String, _ bytes: [UInt8], permissions: mode_t = 0o644) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, permissions)
        if descriptor < 0 { fail("create \(path): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count <= 0 { fail("write \(path): \(String(cString: strerror(errno)))") }
            written += count
        }
        close(descriptor)
    }

    public static func makeSymbolicLink(_ path: String, target: String) {
        if symlink(target, path) != 0 { fail("symlink \(path): \(String(cString: strerror(errno)))") }
    }

    public static func makeFIFO(_ path: String) {
        if mkfifo(path, 0o644) != 0 { fail("mkfifo \(path): \(String(cString: strerror(errno)))") }
    }

    public static func inode(_ path: String) -> UInt64 {
        var status = stat()
        return lstat(path, &status) == 0 ? UInt64(status.st_ino) : 0
    }

    /// Removes `path` and everything beneath it, never following a link; folders the
    /// fuzzed code left without permissions are opened up first.
    public static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            chmod(path, 0o700)
            for name in names(in: path) { removeTree(path + "/" + name) }
            if rmdir(path) != 0 { fail("rmdir \(path): \(String(cString: strerror(errno)))") }
        } else if unlink(path) != 0 {
            fail("unlink \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The names in a folder, sorted; empty when it cannot be listed.
    public static func names(in path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The number of descriptors this process has open.
    public static func openDescriptorCount() -> Int { names(in: "/proc/self/fd").count }
}
