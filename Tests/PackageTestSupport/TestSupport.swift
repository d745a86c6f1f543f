import Foundation
import Glibc
import PackageCore

/// A directory under the system's temporary directory, removed when the test is done.
public final class TemporaryDirectory {
    public let path: String

    /// A fresh directory named after `label`, in the system's temporary directory or in
    /// `parent` (a loop-mounted image, say).
    public init(_ label: String = "test", in parent: String? = nil) throws {
        var base = parent ?? NSTemporaryDirectory()
        while base.hasSuffix("/") { base.removeLast() }
        var template = Array("\(base)/pkgtool-\(label)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw Errno(rawValue: errno) }
        path = String(cString: created)
    }

    deinit { try? FileSystem.removeTree(path) }

    /// `/dev/shm` when it is a tmpfs this process may write to, else nil (the system's
    /// temporary directory). For tests that set up thousands of packages whose durability is
    /// not what they test (a simulated crash loses nothing unsynced): there an fsync or a
    /// syncfs waits for no disk, and nothing else of a save changes.
    public static let memoryBacked: String? = {
        // /proc/self/mounts: "device mount-point type options …", one mount a line.
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return nil }
        let tmpfs = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
        }
        return tmpfs && access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : nil
    }()

    public func url(_ relative: String) -> String { relative.isEmpty ? path : path + "/" + relative }
}

/// Deterministic pseudo-random bytes (SplitMix64): the same seed gives the same file.
public struct SeededBytes {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        var offset = 0
        while offset + 8 <= buffer.count {
            buffer.storeBytes(of: next(), toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        if offset < buffer.count {
            var last = next()
            withUnsafeBytes(of: &last) { bytes in
                for index in offset..<buffer.count { buffer[index] = bytes[index - offset] }
            }
        }
    }

    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { fill($0) }
        return result
    }
}

/// Test-side file helpers, using the package's own I/O layer.
public enum Files {
    public static func write(_ path: String, _ bytes: [UInt8], permissions: UInt32 = 0o644) throws {
        let file = try FileDescriptor.open(
            path, access: .writeOnly, options: [.create, .truncate], permissions: permissions)
        try bytes.withUnsafeBytes { try file.write($0) }
        try file.setPermissions(permissions)
    }

    public static func write(_ path: String, _ text: String, permissions: UInt32 = 0o644) throws {
        try write(path, Array(text.utf8), permissions: permissions)
    }

    /// Writes `size` seeded pseudo-random bytes in 1 MiB chunks.
    public static func writeRandom(_ path: String, size: Int, seed: UInt64) throws {
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        var generator = SeededBytes(seed: seed)
        let buffer = ChunkBuffer()
        var remaining = size
        while remaining > 0 {
            let count = min(remaining, buffer.count)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<count])
            generator.fill(chunk)
            try file.write(UnsafeRawBufferPointer(chunk))
            remaining -= count
        }
    }

    public static func read(_ path: String) throws -> [UInt8] {
        let file = try FileDescriptor.open(path)
        let size = Int(try file.status().size)
        var bytes = [UInt8](repeating: 0, count: size)
        let count = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0) }
        return Array(bytes[..<count])
    }

    public static func makeDirectory(_ path: String) throws { try FileSystem.makeDirectories(path) }

    public static func symlink(_ path: String, to target: String) throws {
        try FileSystem.makeSymbolicLink(path, target: target)
    }
}

/// Runs a program and returns its exit status, standard output and standard error;
/// `environment`, when given, is all it gets (otherwise this process's).
@discardableResult
public func runProgram(
    _ executable: String, _ arguments: [String], input: [UInt8]? = nil, workingDirectory: String? = nil,
    environment: [String: String]? = nil
) throws -> (
    status: Int32, output: String, error: String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
    if let environment { process.environment = environment }
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    let inputPipe = input.map { _ in Pipe() }
    if let inputPipe { process.standardInput = inputPipe }
    try process.run()
    if let input, let inputPipe {
        inputPipe.fileHandleForWriting.write(Data(input))
        try inputPipe.fileHandleForWriting.close()
    }
    // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
    let errorData = LockedData()
    let errorReader = Thread { errorData.set(readToEndOfFile(error.fileHandleForReading)) }
    errorReader.start()
    let outputData = readToEndOfFile(output.fileHandleForReading)
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outputData, as: UTF8.self),
        String(decoding: errorData.value, as: UTF8.self)
    )
}

/// Reads a pipe to its end with `read(2)`, retrying on `EINTR`; Foundation's
/// `readDataToEndOfFile()` traps when a signal interrupts it.
public func readToEndOfFile(_ handle: FileHandle) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    let descriptor = handle.fileDescriptor
    while true {
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}

/// What one thread hands to another once: `value` waits until `set` has given it.
private final class LockedData: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?
    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.signal()
        condition.unlock()
    }
    /// The data `set` gave, waiting for it.
    var value: Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}

/// Finds a program on PATH, or nil.
public func which(_ program: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(program)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}

/// Helpers for save-engine tests.
public enum Trees {
    /// Sets the modification time of `root` and of every directory below it (`.pkgtool`
    /// included) one second back: what a save or a scan then sees is settled, outside the
    /// racy granule of the clock tick it was written in — without waiting for the clock to
    /// move on. Files are left alone (a new ctime would void their recorded hashes).
    public static func settleDirectories(_ root: String) throws {
        let settled = Int64(Date().timeIntervalSince1970 * 1e9) - 1_000_000_000
        var pending = [root]
        while let directory = pending.popLast() {
            for name in try DirectoryListing.names(in: FileDescriptor.openDirectory(directory)) {
                let child = directory + "/" + name
                if try FileSystem.status(child).kind == .directory { pending.append(child) }
            }
            try FileSystem.setModificationTime(directory, settled)
        }
    }

    /// The root hash of a directory's content as pkgtool sees it (its `.pkgtool` left out),
    /// computed from the bytes, never from a manifest.
    public static func contentHash(_ path: String) throws -> ContentHash {
        try TreeScanner(workers: 2, excludedTopLevelNames: [PackageLayout.metadataDirectoryName]).scan(path).snapshot
            .rootHash
    }

    /// The names in a directory, sorted.
    public static func names(_ path: String) throws -> [String] {
        let directory = try FileDescriptor.openDirectory(path)
        return try DirectoryListing.names(in: directory).sorted()
    }
}

/// A file system image loop-mounted for a test (root only): XFS for reflinks, ext4 with few
/// inodes for inode exhaustion. Unmounted and removed when the value goes.
public final class LoopMount {
    public let directory: TemporaryDirectory
    public var path: String { directory.url("mnt") }
    /// The loop device (`loop3`), for its write counters in `/sys/block/loop3/stat`.
    public let device: String

    private init(directory: TemporaryDirectory, device: String) {
        self.directory = directory
        self.device = device
    }

    deinit {
        _ = try? runProgram(which("umount") ?? "/bin/umount", ["-l", path])
    }

    /// Makes an image of `size` bytes with `mkfs` (`["mkfs.xfs", "-q"]`, say) and mounts it;
    /// nil when this machine or user cannot (not root, no mkfs, no loop devices).
    public static func make(size: Int64, mkfs: [String]) -> LoopMount? {
        guard getuid() == 0, let tool = which(mkfs[0]), let mount = which("mount"),
            let directory = try? TemporaryDirectory("loop", in: memoryFolder(room: 2 * size))
        else { return nil }
        let image = directory.url("fs.img")
        guard (try? Files.makeDirectory(directory.url("mnt"))) != nil else { return nil }
        let file = open(image, O_CREAT | O_WRONLY, 0o600)
        guard file >= 0, ftruncate(file, off_t(size)) == 0 else { return nil }
        close(file)
        guard (try? runProgram(tool, Array(mkfs.dropFirst()) + [image]))?.status == 0,
            (try? runProgram(mount, ["-o", "loop", image, directory.url("mnt")]))?.status == 0,
            let source = try? runProgram(which("findmnt") ?? "/bin/findmnt", ["-n", "-o", "SOURCE", directory.url("mnt")])
        else { return nil }
        let device = source.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/").last.map(String.init) ?? ""
        return LoopMount(directory: directory, device: device)
    }

    /// `/dev/shm` when it has `room` bytes free, else nil (the temporary directory): the
    /// image then lives in memory, and the thousands of fsyncs of a crash sweep on it reach
    /// no disk — the file system under test is the image's all the same.
    static func memoryFolder(room: Int64) -> String? {
        var info = statvfs()
        guard statvfs("/dev/shm", &info) == 0, access("/dev/shm", W_OK) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize) >= room ? "/dev/shm" : nil
    }

    /// An XFS image (reflinks), or nil.
    public static func xfs(size: Int64 = 1 << 30) -> LoopMount? { make(size: size, mkfs: ["mkfs.xfs", "-q", "-f"]) }

    /// Bytes the device has written so far (`/sys/block/DEV/stat`, sectors written × 512),
    /// after a `sync`: a loop device's writes are not in the writing process's counters.
    public func bytesWritten() -> Int64 {
        sync()
        guard let text = try? String(contentsOfFile: "/sys/block/\(device)/stat", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 6, let sectors = Int64(fields[6]) else { return 0 }
        return sectors * 512
    }
}
