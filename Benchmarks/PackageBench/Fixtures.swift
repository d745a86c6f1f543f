import PackageCore

/// Deterministic pseudo-random numbers (SplitMix64) for generated fixtures.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
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
        while offset < buffer.count {
            buffer[offset] = UInt8(truncatingIfNeeded: next())
            offset += 1
        }
    }
}

/// Writes generated files with the package's own I/O layer.
public enum FixtureWriter {
    /// A file of `size` seeded random bytes, written in 1 MiB chunks.
    public static func randomFile(_ path: String, size: Int64, seed: UInt64) throws {
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        var generator = SeededGenerator(seed: seed)
        let buffer = ChunkBuffer()
        var remaining = size
        while remaining > 0 {
            let count = Int(min(remaining, Int64(buffer.count)))
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<count])
            generator.fill(chunk)
            try file.write(UnsafeRawBufferPointer(chunk))
            remaining -= Int64(count)
        }
    }

    /// A sparse file of `size` bytes (holes read as zeros without using disk).
    public static func sparseFile(_ path: String, size: Int64) throws {
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        try file.truncate(to: size)
    }

    /// `count` small files (200 B – 8 KiB, half JSON-like text, half random) in nested
    /// folders of about 100 files each.
    public static func smallFileTree(_ root: String, count: Int, seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        try FileSystem.makeDirectories(root)
        var bytes = [UInt8](repeating: 0, count: 8192)
        for index in 0..<count {
            let folder = "\(root)/d\(index / 1000)/s\((index / 100) % 10)"
            if index % 100 == 0 { try FileSystem.makeDirectories(folder) }
            let size = 200 + Int(generator.next() % 7992)
            if index % 2 == 0 {
                let text = Array(#"{"id":\#(index),"title":"page \#(index)","body":"lorem ipsum dolor sit amet "}"#.utf8)
                for position in 0..<size { bytes[position] = text[position % text.count] }
            } else {
                bytes.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[..<size])) }
            }
            let file = try FileDescriptor.open(
                "\(folder)/f\(index)\(index % 2 == 0 ? ".json" : ".bin")", access: .writeOnly,
                options: [.create, .truncate])
            try bytes.withUnsafeBytes { try file.write(UnsafeRawBufferPointer(rebasing: $0[..<size])) }
        }
    }
}

extension FixtureWriter {
    /// The "document" package: `smallFiles` small files (half
    /// JSON-like text, half random) in nested folders under `pages/`, and `mediaCount`
    /// random media files of 1–100 MiB under `media/` (`.mp4` and `.jpg`), about
    /// `mediaBytes` in all. Same seed, same bytes.
    public static func documentPackage(
        _ root: String, smallFiles: Int = 20_000, mediaCount: Int = 40, mediaBytes: Int64 = 950 << 20, seed: UInt64
    ) throws {
        try smallFileTree(root + "/pages", count: smallFiles, seed: seed)
        try FileSystem.makeDirectories(root + "/media")
        var generator = SeededGenerator(seed: seed &+ 1)
        let weights = (0..<mediaCount).map { _ in Double(1 + generator.next() % 100) }
        let scale = Double(mediaBytes) / weights.reduce(0, +)
        for (index, weight) in weights.enumerated() {
            let size = min(max(Int64(weight * scale), 1 << 20), 100 << 20)
            let name = "\(root)/media/clip-\(index < 10 ? "0" : "")\(index).\(index % 4 == 0 ? "jpg" : "mp4")"
            try randomFile(name, size: size, seed: seed &+ 100 &+ UInt64(index))
        }
    }
}
