import Glibc
import PackageCore

/// A pack as a push plans it: the blobs it will hold, each a range of a file of the
/// package, and its trailer. The bytes stay in the files: the upload reads them again
/// (usually from the page cache), so a push holds no pack in memory, whatever the pack size
/// or the chunk size.
struct PackPlan: Sendable {
    /// A blob: `length` bytes at `offset` of the package's file `path`, whose SHA-256 is `digest`.
    struct Piece: Sendable {
        var path: RelativePath
        var offset: Int64
        var length: Int
        var digest: SHA256Digest
    }

    var serial: Int
    var pieces: [Piece] = []
    var size = 0

    init(serial: Int) { self.serial = serial }

    mutating func append(_ piece: Piece) -> UInt32 {
        let offset = size
        pieces.append(piece)
        size += piece.length
        return UInt32(offset)
    }

    var isEmpty: Bool { pieces.isEmpty }

    /// The trailer and the pack's name: the SHA-256 of the trailer, which lists every blob's
    /// SHA-256 and length, so it determines every byte of the pack (Specs/remote.md).
    func sealed() -> (trailer: [UInt8], id: SHA256Digest) {
        let trailer = PackFormat.trailer(pieces.map { ($0.digest, UInt32($0.length)) })
        return (trailer, SHA256Digest.of(trailer))
    }
}

/// The body of a pack's PUT, streamed from the package's files: each blob is read again
/// and checked against the SHA-256 it was planned with as it goes out. A blob that changed
/// in between aborts the transfer before the pack's last byte, so the store never
/// completes a pack whose bytes are not what its name says.
final class PackBody: RequestBody, @unchecked Sendable {
    // @unchecked: used by one transfer thread at a time (libcurl's callbacks run on it).
    private let plan: PackPlan
    private let trailer: [UInt8]
    private let root: Int32
    private let packagePath: String
    private let hasher = SHA256Hasher()
    private var index = 0
    private var within = 0
    private var trailerSent = 0
    private var file: SharedDescriptor?
    private(set) var failure: (any Error)?
    /// Blob bytes handed to the transfer in this attempt, and the most in any attempt: a
    /// retried PUT reports only what goes past the earlier attempts.
    private var sentThisAttempt = 0
    private(set) var reported = 0
    private let progress: (@Sendable (Int) -> Void)?

    /// - Parameters:
    ///   - plan: the pack's blobs, where they are in the package's files.
    ///   - trailer: the pack's trailer, sent after the blobs.
    ///   - root: a descriptor of the package's directory, open for the whole push.
    ///   - packagePath: the package's path, for messages.
    ///   - progress: hears blob bytes as they go out (each byte once, whatever the retries).
    init(
        plan: PackPlan, trailer: [UInt8], root: Int32, packagePath: String, progress: (@Sendable (Int) -> Void)? = nil
    ) {
        self.plan = plan
        self.trailer = trailer
        self.root = root
        self.packagePath = packagePath
        self.progress = progress
    }

    var length: Int64 { Int64(plan.size + trailer.count) }

    func rewind() {
        index = 0
        within = 0
        trailerSent = 0
        sentThisAttempt = 0
        file = nil
        hasher.reset()
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        do {
            if index < plan.pieces.count { return try readBlob(into: buffer) }
            let count = min(buffer.count, trailer.count - trailerSent)
            guard count > 0 else { return 0 }
            trailer.withUnsafeBytes { source in
                buffer.baseAddress!.copyMemory(from: source.baseAddress! + trailerSent, byteCount: count)
            }
            trailerSent += count
            return count
        } catch {
            failure = error
            return nil
        }
    }

    private func readBlob(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let piece = plan.pieces[index]
        let shown = PackageLayout.joined(packagePath, piece.path.string)
        if within == 0 {
            file = SharedDescriptor(try FileDescriptor.openWithoutSymlinks(piece.path.string, relativeTo: root, displayPath: shown))
            hasher.reset()
        }
        let wanted = min(buffer.count, piece.length - within)
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[..<wanted])
        let count = try file!.descriptor.readFully(into: target, at: piece.offset + Int64(within))
        guard count == wanted else { throw BlobUploader.changed(shown) }
        hasher.update(UnsafeRawBufferPointer(target))
        within += count
        sentThisAttempt += count
        if sentThisAttempt > reported {
            progress?(sentThisAttempt - reported)
            reported = sentThisAttempt
        }
        if within == piece.length {
            guard hasher.finish() == piece.digest else { throw BlobUploader.changed(shown) }
            file = nil
            within = 0
            index += 1
        }
        return count
    }
}

/// A directory held open for `*at` calls from several threads at once: the kernel allows
/// concurrent `openat` on one descriptor, and nothing here changes it after opening.
final class OpenDirectory: @unchecked Sendable {
    // @unchecked: the descriptor is only read (as the base of openat) until deinit closes it.
    let descriptor: FileDescriptor
    var rawValue: Int32 { descriptor.rawValue }

    init(_ path: String) throws {
        descriptor = try FileDescriptor.openDirectory(path)
    }
}
