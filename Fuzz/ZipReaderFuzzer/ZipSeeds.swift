// The ZIP fuzzer's own seeds, so that it needs nothing from outside the repository: a
// small tree of every kind of entry the writer knows (hash fields, a link, an empty folder,
// an empty file, modes), packed by PackageZip deflated and stored. Scripts/fuzz adds
// archives made by `zip` and the libzip corpus when they are at hand.
import PackageCore
import PackageZip

enum ZipSeeds {
    /// Writes the seed archives into `directory` (created when missing).
    static func write(to directory: String) throws {
        let tree = scratch + ".seed-tree"
        try? FileSystem.removeTree(tree)
        try FileSystem.makeDirectories(tree + "/a/b")
        try FileSystem.makeDirectories(tree + "/empty")
        try write(Array("{\"k\": \"value value value value\"}\n".utf8), to: tree + "/a/doc.json", permissions: 0o644)
        // Bytes that do not compress, from a fixed seed: the same seeds on every machine.
        var noise = [UInt8](repeating: 0, count: 3000)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for index in noise.indices {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            noise[index] = UInt8(truncatingIfNeeded: state >> 56)
        }
        try write(noise, to: tree + "/a/b/noise.bin", permissions: 0o755)
        try write([], to: tree + "/a/b/zero", permissions: 0o600)
        try FileSystem.makeSymbolicLink(tree + "/a/b/link", target: "../doc.json")
        try FileSystem.makeDirectories(directory)
        for (name, level) in [("pkgtool.zip", 6), ("pkgtool-stored.zip", 0)] {
            _ = try ZipPacker.pack(
                tree, to: directory + "/" + name, options: ZipPackOptions(level: level, workers: 1, modificationTime: 0))
        }
        try FileSystem.removeTree(tree)
    }

    private static func write(_ bytes: [UInt8], to path: String, permissions: UInt32) throws {
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        try bytes.withUnsafeBytes { try file.write($0) }
        try file.setPermissions(permissions)
        try file.close()
    }
}
