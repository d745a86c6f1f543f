import Foundation
import Glibc
import PackageCore

/// A file system on a loop-mounted image file (XFS, for its reflinks), for the large-file
/// suite's second half: packages on XFS, the source on the work directory's ext4.
///
/// A loop device's writes reach its backing file from a kernel thread, so the writing
/// process's own counters (`/proc/PID/io`) do not show what the file system wrote: the
/// honest figure is the device's sectors written (`/sys/block/loopN/stat`, field 7, × 512),
/// read after flushing the file system (`syncfs`) before and after each job.
final class LoopImage {
    let image: String
    let mountPoint: String
    /// The loop device's name in /sys/block ("loop3").
    let device: String
    let filesystem: String
    private var mounted = true

    private init(image: String, mountPoint: String, device: String, filesystem: String) {
        self.image = image
        self.mountPoint = mountPoint
        self.device = device
        self.filesystem = filesystem
    }

    deinit { try? unmount() }

    /// Makes a sparse image of `size` bytes at `directory/xfs.img`, formats it with
    /// `mkfs.xfs` and mounts it at `directory/xfs`. Throws a `Skipped` saying why when this
    /// machine or user cannot (not root, no xfsprogs, no loop devices, a kernel without XFS).
    static func xfs(in directory: String, size: Int64) throws -> LoopImage {
        guard getuid() == 0 else { throw Skipped("mounting an XFS image needs root") }
        guard let mkfs = Spawn.which("mkfs.xfs") ?? ["/usr/sbin/mkfs.xfs", "/sbin/mkfs.xfs"].first(where: { access($0, X_OK) == 0 })
        else { throw Skipped("mkfs.xfs is not installed (apt-get install xfsprogs)") }
        guard let mount = Spawn.which("mount") ?? (access("/bin/mount", X_OK) == 0 ? "/bin/mount" : nil),
            let findmnt = Spawn.which("findmnt") ?? (access("/bin/findmnt", X_OK) == 0 ? "/bin/findmnt" : nil)
        else { throw Skipped("mount or findmnt is missing") }
        let image = directory + "/xfs.img"
        let mountPoint = directory + "/xfs"
        try FileSystem.makeDirectories(mountPoint)
        try FileDescriptor.open(image, access: .writeOnly, options: [.create, .exclusive]).truncate(to: size)
        let formatted = Spawn.plain(mkfs, ["-q", "-f", image])
        guard formatted.status == 0 else {
            try? FileSystem.remove(image)
            throw Skipped("mkfs.xfs failed: \(formatted.lastLine)")
        }
        let mounted = Spawn.plain(mount, ["-o", "loop", image, mountPoint])
        guard mounted.status == 0 else {
            try? FileSystem.remove(image)
            throw Skipped("cannot mount an XFS image: \(mounted.lastLine)")
        }
        let source = Spawn.plain(findmnt, ["-n", "-o", "SOURCE", mountPoint]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let device = source.split(separator: "/").last.map(String.init) ?? ""
        let loop = LoopImage(image: image, mountPoint: mountPoint, device: device, filesystem: "xfs")
        guard device.hasPrefix("loop"), access("/sys/block/\(device)/stat", R_OK) == 0 else {
            throw Skipped("the XFS image is mounted from '\(source)', whose write counters cannot be read")
        }
        return loop
    }

    /// Sectors the device has written so far, × 512, after flushing the file system (its
    /// dirty pages and its log) to the device.
    func bytesWritten() throws -> Int64 {
        let flushed = Spawn.plain(Spawn.measureTool, ["--syncfs", mountPoint])
        guard flushed.status == 0 else { throw BenchError("cannot flush \(mountPoint): \(flushed.lastLine)") }
        let text = try String(contentsOfFile: "/sys/block/\(device)/stat", encoding: .utf8)
        let fields = text.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 6, let sectors = Int64(fields[6]) else {
            throw BenchError("cannot read the sectors written from /sys/block/\(device)/stat: '\(text)'")
        }
        return sectors * 512
    }

    /// Unmounts the image (lazily if it is busy) and removes it.
    func unmount() throws {
        guard mounted else { return }
        mounted = false
        let umount = Spawn.which("umount") ?? "/bin/umount"
        if Spawn.plain(umount, [mountPoint]).status != 0 {
            let lazy = Spawn.plain(umount, ["-l", mountPoint])
            guard lazy.status == 0 else { throw BenchError("cannot unmount \(mountPoint): \(lazy.lastLine)") }
        }
        try FileSystem.remove(image)
        try? FileSystem.removeDirectory(mountPoint)
    }

    /// Why a part of a run was left out (reported as a note, never as a failure).
    struct Skipped: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
