import CZlib
import Foundation
import PackageCore
import PackageTestSupport
import PackageZip
@testable import PkgToolCLI

/// Runs `pkgtool` in-process with a capturing console.
func pkgtool(_ arguments: String...) -> (status: ExitStatus, output: String, errors: [String]) {
    let console = Console(capturing: ())
    let status = PkgTool.run(arguments, console: console)
    return (status, console.capturedText, console.capturedErrors)
}

/// A small package tree exercising what an archive must carry: nested and empty
/// directories, an executable, a symbolic link, UTF-8 names, compressible and random data,
/// an empty file and a file of several 1 MiB chunks.
func makeSampleTree(_ root: String, seed: UInt64 = 1, bigSize: Int = 2_500_000) throws {
    var random = SeededBytes(seed: seed)
    try Files.makeDirectory(root + "/pages/deep/er")
    try Files.makeDirectory(root + "/empty/inner-empty")
    try Files.makeDirectory(root + "/media")
    try Files.write(root + "/metadata.json", #"{"title": "A document", "pages": 3}"#)
    for page in 0..<5 {
        try Files.write(root + "/pages/\(page).json", String(repeating: #"{"text": "page \#(page) lorem ipsum"}"#, count: 40))
    }
    try Files.write(root + "/pages/deep/er/note.txt", "deep\n")
    try Files.write(root + "/run.sh", "#!/bin/sh\necho hi\n", permissions: 0o755)
    try Files.write(root + "/empty.txt", [UInt8]())
    try Files.write(root + "/Ünïcödé naïve €.txt", "utf-8 name\n")
    try Files.write(root + "/media/noise.bin", random.bytes(300_000))
    var big = [UInt8]()
    big.reserveCapacity(bigSize)
    let line = Array("the quick brown fox jumps over the lazy dog 0123456789\n".utf8)
    while big.count < bigSize { big.append(contentsOf: line) }
    try Files.write(root + "/media/big.txt", Array(big.prefix(bigSize)))
    try Files.symlink(root + "/link-to-meta", to: "metadata.json")
    try Files.symlink(root + "/pages/up-link", to: "../run.sh")
    try FileSystem.setPermissions(root + "/pages/deep", 0o750)
}

/// Every difference between two trees (names, kinds, bytes, permission bits, link
/// targets, and file modification times to the second when `times`), as readable lines.
func treeDifferences(_ left: String, _ right: String, times: Bool = true) throws -> [String] {
    let a = try TreeScanner(workers: 1).scan(left).snapshot
    let b = try TreeScanner(workers: 1).scan(right).snapshot
    var differences: [String] = []
    let byPath = Dictionary(uniqueKeysWithValues: b.entries.map { ($0.path, $0) })
    for entry in a.entries {
        guard let other = byPath[entry.path] else {
            differences.append("missing on the right: \(entry.path)")
            continue
        }
        if entry.kind != other.kind { differences.append("kind differs: \(entry.path)") }
        if entry.kind != .directory && entry.hash != other.hash { differences.append("content differs: \(entry.path)") }
        if entry.kind != .symbolicLink && entry.permissions != other.permissions {
            differences.append(
                "mode differs: \(entry.path) \(String(entry.permissions, radix: 8)) vs \(String(other.permissions, radix: 8))")
        }
        if entry.linkTarget != other.linkTarget { differences.append("link target differs: \(entry.path)") }
        if times && entry.kind == .regular
            && entry.modificationTime / 1_000_000_000 != other.modificationTime / 1_000_000_000
        {
            differences.append("mtime differs: \(entry.path)")
        }
    }
    let leftPaths = Set(a.entries.map(\.path))
    for entry in b.entries where !leftPaths.contains(entry.path) {
        differences.append("extra on the right: \(entry.path)")
    }
    return differences
}

/// The names in a directory (for "nothing was left behind" checks).
func listing(_ path: String) throws -> [String] {
    try DirectoryListing.names(in: FileDescriptor.openDirectory(path)).sorted()
}

/// The libzip regression corpus beside the package root (or where `PKGTOOL_CORPUS` says: a
/// worktree has no `../shared`), or nil when absent (a user's clone).
func corpusDirectory() -> String? {
    if let given = ProcessInfo.processInfo.environment["PKGTOOL_CORPUS"], FileManager.default.fileExists(atPath: given) {
        return given
    }
    let here = URL(fileURLWithPath: #filePath)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let corpus = root.deletingLastPathComponent().appendingPathComponent("shared/corpus/libzip-regress").path
    return FileManager.default.fileExists(atPath: corpus) ? corpus : nil
}

func crc32Of(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { UInt32(crc32_z(0, $0.baseAddress?.assumingMemoryBound(to: Bytef.self), $0.count)) }
}

/// Raw deflate of `bytes` with zlib, for crafted archives.
func rawDeflate(_ bytes: [UInt8]) -> [UInt8] {
    var stream = z_stream()
    deflateInit2_(&stream, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: bytes.count + bytes.count / 100 + 64)
    var input = bytes
    let produced = input.withUnsafeMutableBufferPointer { inBuffer in
        output.withUnsafeMutableBufferPointer { outBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            stream.next_out = outBuffer.baseAddress
            stream.avail_out = uInt(outBuffer.count)
            deflate(&stream, Z_FINISH)
            return outBuffer.count - Int(stream.avail_out)
        }
    }
    return Array(output[..<produced])
}

/// Builds ZIP archives byte by byte, with every field under the test's control: the way
/// to make the hostile and corrupt archives no honest tool writes.
struct CraftedZip {
    struct Entry {
        var name: [UInt8]
        var data: [UInt8]
        var method: UInt16 = 0
        var uncompressedSize: UInt32
        var crc: UInt32
        var flags: UInt16 = 0
        var externalAttributes: UInt32 = 0o100644 << 16
        var versionMadeBy: UInt16 = 3 << 8 | 30
        var localExtra: [UInt8] = []
        var centralExtra: [UInt8] = []
        /// Overrides of what the central record says.
        var centralOffset: UInt32?
        var centralCompressedSize: UInt32?
        var centralUncompressedSize: UInt32?
        var localName: [UInt8]?
        var dataDescriptor: [UInt8]?

        /// A stored entry.
        init(_ name: String, _ content: [UInt8]) {
            self.name = Array(name.utf8)
            data = content
            uncompressedSize = UInt32(content.count)
            crc = crc32Of(content)
        }

        init(_ name: String, _ text: String) { self.init(name, Array(text.utf8)) }

        /// A deflated entry.
        static func deflated(_ name: String, _ content: [UInt8]) -> Entry {
            var entry = Entry(name, content)
            entry.data = rawDeflate(content)
            entry.method = 8
            return entry
        }

        static func symlink(_ name: String, to target: String) -> Entry {
            var entry = Entry(name, Array(target.utf8))
            entry.externalAttributes = 0o120777 << 16
            return entry
        }

        static func directory(_ name: String) -> Entry {
            var entry = Entry(name.hasSuffix("/") ? name : name + "/", [UInt8]())
            entry.externalAttributes = 0o040755 << 16 | 0x10
            return entry
        }
    }

    var entries: [Entry] = []
    var prefix: [UInt8] = []
    var suffix: [UInt8] = []
    var comment: [UInt8] = []
    var declaredCount: UInt16?

    init(_ entries: [Entry] = []) { self.entries = entries }

    var bytes: [UInt8] {
        var out = prefix
        var central: [UInt8] = []
        for entry in entries {
            let offset = UInt32(out.count - prefix.count)
            let localName = entry.localName ?? entry.name
            out += le32(0x0403_4B50) + le16(20) + le16(entry.flags) + le16(entry.method) + le16(0) + le16(0x5821)
            out += le32(entry.crc) + le32(UInt32(entry.data.count)) + le32(entry.uncompressedSize)
            out += le16(UInt16(localName.count)) + le16(UInt16(entry.localExtra.count)) + localName + entry.localExtra
            out += entry.data
            if let descriptor = entry.dataDescriptor { out += descriptor }
            central += le32(0x0201_4B50) + le16(entry.versionMadeBy) + le16(20) + le16(entry.flags) + le16(entry.method)
            central += le16(0) + le16(0x5821) + le32(entry.crc)
            central += le32(entry.centralCompressedSize ?? UInt32(entry.data.count))
            central += le32(entry.centralUncompressedSize ?? entry.uncompressedSize)
            central += le16(UInt16(entry.name.count)) + le16(UInt16(entry.centralExtra.count)) + le16(0) + le16(0)
            central += le16(0) + le32(entry.externalAttributes) + le32(entry.centralOffset ?? offset)
            central += entry.name + entry.centralExtra
        }
        let centralOffset = UInt32(out.count - prefix.count)
        out += central
        let count = declaredCount ?? UInt16(entries.count)
        out += le32(0x0605_4B50) + le16(0) + le16(0) + le16(count) + le16(count)
        out += le32(UInt32(central.count)) + le32(centralOffset) + le16(UInt16(comment.count)) + comment
        return out + suffix
    }

    func write(to path: String) throws { try Files.write(path, bytes) }
}

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
