import CCrypto

/// A SHA-256 digest: the name of every object a remote stores (Specs/remote.md).
///
/// Held as four big-endian words, so that equality and hashing in the sets a push and a
/// pull keep (tens of thousands of blobs) compare integers, not arrays.
public struct SHA256Digest: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The length of a digest in bytes.
    public static let byteCount = 32
    var words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest whose 32 bytes are `bytes`.
    package init(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count == Self.byteCount, "a SHA-256 digest is 32 bytes")
        func word(_ index: Int) -> UInt64 {
            var value: UInt64 = 0
            for byte in bytes[(index * 8)..<(index * 8 + 8)] { value = value << 8 | UInt64(byte) }
            return value
        }
        words = (word(0), word(1), word(2), word(3))
    }

    /// Parses 64 hexadecimal digits (either case); nil otherwise.
    public init?(hex: some StringProtocol) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 32)
        for index in 0..<32 {
            guard let high = Self.nibble(digits[2 * index]), let low = Self.nibble(digits[2 * index + 1]) else {
                return nil
            }
            bytes[index] = high << 4 | low
        }
        self = bytes.withUnsafeBytes { SHA256Digest(bytes: $0) }
    }

    /// The 32 bytes, most significant first.
    public var bytes: [UInt8] {
        var result = [UInt8]()
        result.reserveCapacity(32)
        for word in [words.0, words.1, words.2, words.3] {
            for shift in stride(from: 56, through: 0, by: -8) { result.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return result
    }

    /// 64 lowercase hexadecimal digits, as `sha256sum` prints.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether two digests are the same 32 bytes.
    public static func == (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3
    }

    /// Feeds the digest to `hasher` (its first half: the digest is uniformly distributed already).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
    }

    /// Byte-wise order, as `sort` orders the hexadecimal names.
    public static func < (lhs: SHA256Digest, rhs: SHA256Digest) -> Bool {
        (lhs.words.0, lhs.words.1, lhs.words.2, lhs.words.3) < (rhs.words.0, rhs.words.1, rhs.words.2, rhs.words.3)
    }

    /// The SHA-256 of `bytes`, in one call.
    package static func of(_ bytes: UnsafeRawBufferPointer) -> SHA256Digest {
        let hasher = SHA256Hasher()
        hasher.update(bytes)
        return hasher.finish()
    }

    /// The SHA-256 of `bytes`, in one call.
    public static func of(_ bytes: [UInt8]) -> SHA256Digest {
        bytes.withUnsafeBytes { of($0) }
    }

    /// SHA-256 of nothing: the payload hash of a request without a body.
    public static let empty = SHA256Digest.of([])

    /// Appends the 32 bytes to `buffer`.
    func append(to buffer: inout [UInt8]) { buffer.append(contentsOf: bytes) }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// A streaming SHA-256 over libcrypto's EVP digest interface (which uses the CPU's SHA
/// extensions where it has them: about 1.3 GB/s on one core here).
///
/// Non-copyable: it owns its `EVP_MD_CTX` and frees it once.
package struct SHA256Hasher: ~Copyable {
    private let context: OpaquePointer

    package init() {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        self.context = context
        reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts a new digest, keeping the context's allocation.
    package func reset() {
        guard EVP_DigestInit_ex(context, SHA256Algorithm.shared.digest, nil) == 1 else {
            fatalError("EVP_DigestInit_ex(SHA-256) failed")
        }
    }

    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    package func update(_ bytes: [UInt8]) { bytes.withUnsafeBytes { update($0) } }

    /// The digest of everything given since the last reset; the hasher must be reset
    /// before it is used again.
    package func finish() -> SHA256Digest {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        _ = output.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        return output.withUnsafeBytes { SHA256Digest(bytes: $0) }
    }
}

/// The SHA-256 algorithm object, fetched once (OpenSSL 3 looks an algorithm up in its
/// provider tables on every implicit fetch).
struct SHA256Algorithm: @unchecked Sendable {
    // @unchecked: an EVP_MD fetched once is immutable and documented as safe to share.
    let digest: OpaquePointer

    static let shared: SHA256Algorithm = {
        guard let digest = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("libcrypto has no SHA-256") }
        return SHA256Algorithm(digest: digest)
    }()
}

/// HMAC-SHA256, the keyed hash SigV4 chains to derive its signing key and sign.
enum HMACSHA256 {
    static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                output.withUnsafeMutableBufferPointer { out in
                    _ = HMAC(
                        SHA256Algorithm.shared.digest, keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress,
                        messageBytes.count, out.baseAddress, &length)
                }
            }
        }
        return output
    }

    static func authenticate(key: [UInt8], message: String) -> [UInt8] {
        authenticate(key: key, message: Array(message.utf8))
    }
}
