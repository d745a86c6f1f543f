import CZlib

/// What surrounds a deflate stream: nothing (ZIP entries) or zlib's 2-byte header and
/// Adler-32 trailer (remote version manifests, Specs/remote.md).
package enum DeflateFraming: Sendable {
    case raw
    case zlib

    /// zlib's `windowBits` for a 32 KiB window in this framing.
    var windowBits: Int32 { self == .raw ? -MAX_WBITS : MAX_WBITS }
}
