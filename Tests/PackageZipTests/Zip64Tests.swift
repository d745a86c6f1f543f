import Foundation
import PackageCore
import PackageTestSupport
import PackageTestTraits
import PackageZip
import Testing

@Suite("ZIP64: written only when needed, and then right", .serialized)
struct Zip64Tests {
    @Test("more than 65,535 entries: ZIP64 end records, read back by pkgtool and python", Prerequisite.programs("python3"))
    func manyEntries() throws {
        let directory = try TemporaryDirectory("zip64-many")
        let source = directory.url("src")
        let count = 66_000
        for folder in 0..<(count / 1000) {
            try Files.makeDirectory(source + "/d\(folder)")
            for index in 0..<1000 {
                let file = try FileDescriptor.open(
                    source + "/d\(folder)/\(index)", access: .writeOnly, options: [.create, .truncate])
                try file.write(contentsOf: [UInt8(truncatingIfNeeded: index)])
            }
        }
        let archive = directory.url("many.zip")
        #expect(pkgtool("pack", "--level", "1", source, archive).status == .success)
        let opened = try ZipArchive.open(archive)
        #expect(opened.isZip64)
        #expect(opened.entries.count == count + count / 1000)
        try opened.verify()
        do {
            let python = try Prerequisite.program("python3")
            let script = "import zipfile,sys; z=zipfile.ZipFile(sys.argv[1]); print(z.testzip(), len(z.infolist()))"
            let result = try runProgram(python, ["-c", script, archive])
            #expect(result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "None \(count + count / 1000)")
        }
    }

    @Test("an entry over 4 GiB (a sparse file): ZIP64 sizes, read back by pkgtool and unzip -t", Prerequisite.programs("unzip"))
    func hugeEntry() throws {
        let directory = try TemporaryDirectory("zip64-huge")
        let source = directory.url("src")
        try Files.makeDirectory(source)
        let size: Int64 = (4 << 30) + 12_345
        let file = try FileDescriptor.open(source + "/huge.bin", access: .writeOnly, options: [.create, .truncate])
        try Array("start".utf8).withUnsafeBytes { try file.write($0, at: 0) }
        try Array("end".utf8).withUnsafeBytes { try file.write($0, at: size - 3) }
        try file.close()
        try Files.write(source + "/small.txt", "small")
        let archive = directory.url("huge.zip")
        #expect(pkgtool("pack", "--level", "1", source, archive).status == .success)
        let opened = try ZipArchive.open(archive)
        let huge = try #require(opened.entry(at: "huge.bin"))
        #expect(huge.uncompressedSize == size)
        #expect(huge.compressedSize < 64 << 20)
        #expect(opened.entry(at: "small.txt")?.dataOffset ?? 0 > 0)
        try opened.verify()
        do {
            let unzip = try Prerequisite.program("unzip")
            let test = try runProgram(unzip, ["-tq", archive])
            #expect(test.status == 0, "\(test.output) \(test.error)")
        }
    }

    @Test("a stored entry over 4 GiB in a sparse archive, built by hand, is read and checked")
    func handBuiltHugeStored() throws {
        let directory = try TemporaryDirectory("zip64-stored")
        let size: Int64 = (4 << 30) + 1
        // CRC-32 of `size` zero bytes, by combining the CRC of 1 MiB of zeros.
        let mebibyte = [UInt8](repeating: 0, count: 1 << 20)
        let chunkCRC = crc32Of(mebibyte)
        var crc: UInt32 = 0
        var done: Int64 = 0
        while done + (1 << 20) <= size {
            crc = CRC32.combine(crc, chunkCRC, secondLength: 1 << 20)
            done += 1 << 20
        }
        crc = CRC32.combine(crc, crc32Of([UInt8](repeating: 0, count: Int(size - done))), secondLength: size - done)
        let name = Array("zeros".utf8)
        let zip64Local = le16(1) + le16(16) + le64(UInt64(size)) + le64(UInt64(size))
        var local = le32(0x0403_4B50) + le16(45) + le16(0) + le16(0) + le16(0) + le16(0x5821) + le32(crc)
        local += le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le16(UInt16(name.count)) + le16(UInt16(zip64Local.count))
        local += name + zip64Local
        let centralOffset = Int64(local.count) + size
        let zip64Central = le16(1) + le16(16) + le64(UInt64(size)) + le64(UInt64(size))
        var central = le32(0x0201_4B50) + le16(3 << 8 | 45) + le16(45) + le16(0) + le16(0) + le16(0) + le16(0x5821)
        central += le32(crc) + le32(0xFFFF_FFFF) + le32(0xFFFF_FFFF) + le16(UInt16(name.count))
        central += le16(UInt16(zip64Central.count)) + le16(0) + le16(0) + le16(0) + le32(0o100644 << 16) + le32(0)
        central += name + zip64Central
        var end = le32(0x0606_4B50) + le64(44) + le16(3 << 8 | 45) + le16(45) + le32(0) + le32(0) + le64(1) + le64(1)
        end += le64(UInt64(central.count)) + le64(UInt64(centralOffset))
        end += le32(0x0706_4B50) + le32(0) + le64(UInt64(centralOffset) + UInt64(central.count)) + le32(1)
        end += le32(0x0605_4B50) + le16(0) + le16(0) + le16(1) + le16(1) + le32(UInt32(central.count))
        end += le32(0xFFFF_FFFF) + le16(0)
        let path = directory.url("sparse.zip")
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        try local.withUnsafeBytes { try file.write($0, at: 0) }
        try (central + end).withUnsafeBytes { try file.write($0, at: centralOffset) }
        try file.close()
        let archive = try ZipArchive.open(path)
        #expect(archive.isZip64 && archive.entries[0].uncompressedSize == size)
        try archive.verify()
    }
}
