import CHashKernel

/// An XXH3-128 digest: the identity of a file's bytes, a symbolic link's target or a tree.
///
/// `description` is the canonical hex `xxhsum -H2` prints: 32 lowercase digits, the high
/// 64 bits first. XXH3 is fast and well distributed but not cryptographic: it detects
/// accidents, not forgeries (see Specs/hashing.md).
public struct ContentHash: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The high 64 bits: the first 8 canonical bytes.
    public var high: UInt64
    /// The low 64 bits: the last 8 canonical bytes.
    public var low: UInt64

    /// A hash from its two 64-bit halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// From the 16 canonical (big-endian) bytes.
    public init(canonicalBytes bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == 16, "a content hash is 16 bytes")
        high = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        low = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// Parses 32 hexadecimal digits (either case); nil for anything else.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 32 else { return nil }
        var words: [UInt64] = [0, 0]
        for (index, digit) in digits.enumerated() {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
            default: return nil
            }
            words[index / 16] = words[index / 16] << 4 | UInt64(value)
        }
        high = words[0]
        low = words[1]
    }

    /// The hash of zero bytes.
    public static let empty = ContentHash.of(UnsafeRawBufferPointer(start: nil, count: 0))

    /// The hash of a buffer, in one call.
    public static func of(_ bytes: UnsafeRawBufferPointer) -> ContentHash {
        var digest = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &digest) { out in
            pkg_hash_oneshot(bytes.baseAddress, bytes.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return withUnsafeBytes(of: digest) { ContentHash(canonicalBytes: $0) }
    }

    /// The hash of a byte sequence.
    public static func of<Bytes: Sequence>(_ bytes: Bytes) -> ContentHash where Bytes.Element == UInt8 {
        if let hash = bytes.withContiguousStorageIfAvailable({ ContentHash.of(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        return Array(bytes).withUnsafeBytes { ContentHash.of($0) }
    }

    /// The 16 canonical bytes, high word first, big-endian.
    public var canonicalBytes: [UInt8] {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
    }

    /// Appends the 16 canonical bytes to `buffer`.
    public func append(to buffer: inout [UInt8]) {
        withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { buffer.append(contentsOf: $0) }
    }

    /// The 32 lowercase hex digits `xxhsum -H2` prints.
    public var description: String {
        var text = [UInt8](repeating: 0, count: 32)
        let digits = Array("0123456789abcdef".utf8)
        for index in 0..<16 {
            let word = index < 8 ? high : low
            let byte = UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * (index % 8)))
            text[2 * index] = digits[Int(byte >> 4)]
            text[2 * index + 1] = digits[Int(byte & 0xF)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Orders hashes by their canonical bytes (high word first), for sorting.
    public static func < (lhs: ContentHash, rhs: ContentHash) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

/// A streaming XXH3-128 computation: feed it chunks, then take the digest.
///
/// Owns libxxhash's state (about 600 bytes, 64-byte aligned); non-copyable so that the
/// state is freed exactly once. The AVX2 kernel is used when the CPU has it.
public struct ContentHasher: ~Copyable {
    private let state: OpaquePointer

    /// A hasher with nothing fed yet.
    public init() {
        guard let state = pkg_hash_create() else { fatalError("out of memory allocating an XXH3 state") }
        self.state = state
    }

    deinit { pkg_hash_free(state) }

    /// Starts over, as if newly created.
    public func reset() { pkg_hash_reset(state) }

    /// Feeds `bytes`; pieces of any size give the same digest as one whole.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        pkg_hash_update(state, bytes.baseAddress, bytes.count)
    }

    /// Feeds the bytes of a sequence (an array, `Data`, a string's UTF-8 view).
    public func update<Bytes: Sequence>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        if bytes.withContiguousStorageIfAvailable({ update(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { update($0) }
        }
    }

    /// The digest of everything fed so far; feeding may continue afterwards.
    public func digest() -> ContentHash {
        var digest = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &digest) { out in
            pkg_hash_digest(state, out.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return withUnsafeBytes(of: digest) { ContentHash(canonicalBytes: $0) }
    }
}

/// Which XXH3 code path is in use, for benchmarks and diagnostics.
package enum HashKernel: Sendable {
    case libxxhash, avx2

    package static var active: HashKernel {
        pkg_hash_active_kernel() == PKG_HASH_KERNEL_AVX2 ? .avx2 : .libxxhash
    }

    /// Forces the portable libxxhash path (for measuring it against the AVX2 one).
    package static func forcePortable(_ portable: Bool) { pkg_hash_force_portable(portable ? 1 : 0) }
}
