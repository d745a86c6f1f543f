import Glibc

/// One name in a directory, with the kind the directory entry reports (`d_type`).
package struct DirectoryEntry: Sendable, Hashable {
    package var name: String
    /// `.unknown` when the file system does not fill `d_type`; `stat` tells then.
    package var kind: FileKind
}

/// Lists directories with getdents64 into a reused buffer: no `DIR` streams, no per-entry
/// allocation besides the name.
package enum DirectoryListing {
    /// The entries of an open directory, "." and ".." left out, in the kernel's order.
    ///
    /// Names must be valid UTF-8 (see Specs/hashing.md); others fail with a clear error, or
    /// with `skippingNonUTF8Names` are left out: for folders pkgtool only looks into for
    /// names of its own (a package's parent, swept for leftovers), where a neighbour's
    /// Latin-1 name is none of its business.
    /// - Complexity: one `getdents64` per 32 KiB of entries.
    package static func entries(
        in directory: borrowing FileDescriptor, skippingNonUTF8Names: Bool = false
    ) throws(FileSystemError) -> [DirectoryEntry] {
        var result: [DirectoryEntry] = []
        let size = 32 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        // Read from offset 0 whatever the descriptor's position: a descriptor listed twice works.
        _ = try? Syscall.lseek(directory.rawValue, 0, SEEK_SET)
        while true {
            let count: Int
            do { count = try Syscall.getdents64(directory.rawValue, buffer, path: directory.path) } catch {
                throw FileSystemError(.readDirectory, path: directory.path, errno: error)
            }
            if count == 0 { break }
            var offset = 0
            while offset < count {
                // struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
                let record = buffer.baseAddress! + offset
                let length = Int(record.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
                let type = record.load(fromByteOffset: 18, as: UInt8.self)
                let namePointer = (record + 19).assumingMemoryBound(to: UInt8.self)
                var nameLength = 0
                while namePointer[nameLength] != 0 { nameLength += 1 }
                offset += length
                let nameBytes = UnsafeBufferPointer(start: namePointer, count: nameLength)
                if nameLength <= 2 && nameBytes.allSatisfy({ $0 == UInt8(ascii: ".") }) { continue }
                guard let name = String(validating: nameBytes, as: UTF8.self) else {
                    if skippingNonUTF8Names { continue }
                    let shown = TextEscaping.escapingInvalidUTF8(Array(nameBytes))
                    throw FileSystemError(
                        .readDirectory, path: directory.path + "/" + shown,
                        reason: "the name is not valid UTF-8, which packages require")
                }
                result.append(DirectoryEntry(name: name, kind: kindFromDirectoryType(type)))
            }
        }
        return result
    }

    /// The names in an open directory, "." and ".." left out.
    package static func names(
        in directory: borrowing FileDescriptor, skippingNonUTF8Names: Bool = false
    ) throws(FileSystemError) -> [String] {
        try entries(in: directory, skippingNonUTF8Names: skippingNonUTF8Names).map(\.name)
    }

    private static func kindFromDirectoryType(_ type: UInt8) -> FileKind {
        switch type {
        case 8: return .regular  // DT_REG
        case 4: return .directory  // DT_DIR
        case 10: return .symbolicLink  // DT_LNK
        case 1: return .fifo  // DT_FIFO
        case 12: return .socket  // DT_SOCK
        case 2: return .characterDevice  // DT_CHR
        case 6: return .blockDevice  // DT_BLK
        default: return .unknown
        }
    }
}
