import PackageCore

/// The bytes of a large file the engine writes, produced in order from where a pull found
/// them: the pieces DEST's old copy still holds, read from it, and the new pieces, read
/// from the staging area's `blobs/` (each checked against its SHA-256 as it is read: a
/// machine crash may have damaged one since it was downloaded).
///
/// So a media file with 1 MiB changed is written once, by the engine, instead of being
/// assembled in the staging area first and then copied. The engine hashes what it receives
/// and refuses a file whose bytes are not the version's (DEST's old copy changed meanwhile,
/// say): nothing in DEST changes then.
struct StagedContentStream: ContentStream {
    enum Part: Sendable {
        /// `length` bytes at `offset` of DEST's file `path`.
        case local(path: String, offset: Int64, length: Int)
        /// A staged blob file.
        case blob(path: String, digest: SHA256Digest, length: Int)
    }

    let parts: [Part]
    /// The largest part: the size of the one buffer this uses.
    let largest: Int

    init(parts: [Part]) {
        self.parts = parts
        largest = parts.map { part -> Int in
            switch part {
            case .local(_, _, let length), .blob(_, _, let length): return length
            }
        }.max() ?? 0
    }

    func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(largest, 1), alignment: 4096)
        defer { buffer.deallocate() }
        var openPath = ""
        var open: SharedDescriptor?
        for part in parts {
            switch part {
            case .local(let path, let offset, let length):
                if !PathOrder.sameBytes(path, openPath) {
                    open = SharedDescriptor(try FileDescriptor.open(path, options: [.noFollow]))
                    openPath = path
                }
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
                guard try open!.descriptor.readFully(into: bytes, at: offset) == length else {
                    throw RemoteError(.localChange, "'\(path)' changed while the pull used it; pull again")
                }
                try body(UnsafeRawBufferPointer(bytes))
            case .blob(let path, let digest, let length):
                let file = try FileDescriptor.open(path)
                let bytes = UnsafeMutableRawBufferPointer(rebasing: buffer[..<length])
                let count = try file.readFully(into: bytes, at: 0)
                guard count == length, SHA256Digest.of(UnsafeRawBufferPointer(bytes)) == digest else {
                    try? FileSystem.remove(path)
                    throw RemoteError(
                        .verificationFailed, "the staged blob '\(path)' is damaged (it was removed): pull again")
                }
                try body(UnsafeRawBufferPointer(bytes))
            }
        }
    }
}
