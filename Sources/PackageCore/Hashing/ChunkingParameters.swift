import CHashKernel

/// The rules of the content-defined chunker (Specs/hashing.md, "Chunk lists"): where a
/// large file is cut into chunks so that an edit changes only the chunks it touches.
///
/// A cut follows the byte at which the file's Gear hash (the 64 bytes ending there) has
/// none of a mask's bits set, FastCDC's "normalized chunking": a strict mask while the chunk
/// is shorter than `targetSize`, a loose one after, never before `minimumSize` bytes
/// and always at `maximumSize`. Cut points are a pure function of the bytes.
package struct ChunkingParameters: Sendable, Hashable {
    /// No cut before a chunk holds this many bytes (the last chunk of a file may be shorter).
    package var minimumSize: Int
    /// Where the strict mask gives way to the loose one (FastCDC's "normal size").
    package var targetSize: Int
    /// A chunk that reaches this length is cut there.
    package var maximumSize: Int
    /// Tested while the chunk is shorter than `targetSize` (20 bits: cuts are rarer there).
    package var strictMask: UInt64
    /// Tested from `targetSize` on (19 bits, a subset of the strict ones).
    package var looseMask: UInt64
    /// Files of at least this many bytes get a chunk list; smaller ones are one unit anyway.
    package var fileThreshold: Int64

    /// What pkgtool records: 256 KiB minimum, the masks switching at 768 KiB, 4 MiB
    /// maximum, for files from 4 MiB; chunks of random data average 1.0 MiB. (One mask bit
    /// of normalization, not FastCDC's two: a 1 MiB overwrite then changes 2.2 chunks on
    /// average and at most 5 in 400 trials, against 2.8 and 10 with two; see Specs/hashing.md.)
    package static let standard = ChunkingParameters(
        minimumSize: 256 << 10, targetSize: 768 << 10, maximumSize: 4 << 20,
        strictMask: 0xACA8_8000_0000_0FFF, looseMask: 0xAC88_8000_0000_0FFF, fileThreshold: 4 << 20)

    /// Other sizes (tests use small ones to make many chunks cheaply). The masks should
    /// include the hash's low 8 bits, which the vector kernel filters on.
    package init(
        minimumSize: Int, targetSize: Int, maximumSize: Int, strictMask: UInt64, looseMask: UInt64,
        fileThreshold: Int64
    ) {
        precondition(minimumSize >= 64, "a chunk must hold the Gear hash's 64-byte window")
        precondition(minimumSize <= targetSize && targetSize <= maximumSize && maximumSize <= Int(UInt32.max))
        self.minimumSize = minimumSize
        self.targetSize = targetSize
        self.maximumSize = maximumSize
        self.strictMask = strictMask
        self.looseMask = looseMask
        self.fileThreshold = fileThreshold
    }

    /// The Gear table: entry v is the (v + 1)-th output of SplitMix64 from the state
    /// 0x706B676368756E6B ("pkgchunk"), as Specs/hashing.md writes down.
    package static var gearTable: [UInt64] {
        withUnsafeBytes(of: pkg_gear_table) { Array($0.bindMemory(to: UInt64.self)) }
    }
}

/// Which Gear search is in use, for benchmarks and tests: a portable byte loop, or the
/// AVX-512 (VBMI) filter. Both find the same cut points.
package enum ChunkingKernel: Sendable {
    case portable, avx512

    package static var active: ChunkingKernel {
        pkg_gear_active_kernel() == PKG_GEAR_KERNEL_AVX512 ? .avx512 : .portable
    }

    /// Forces the portable loop (for comparing the two).
    package static func forcePortable(_ portable: Bool) { pkg_gear_force_portable(portable ? 1 : 0) }
}
