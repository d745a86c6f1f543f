// The ZIP reader's fuzz target: every input is written to a scratch file and opened,
// verified, snapshotted and (when it opens) extracted into a scratch directory. Built only
// by Scripts/fuzz (PKGTOOL_FUZZ=1, -sanitize=fuzzer,address): libFuzzer provides `main`.
// A finding is a crash, a sanitizer report, a hang or a leak, never a refusal: refusing bad
// input is the reader's job.
import Glibc
import PackageCore
import PackageZip

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = scratch + ".zip"
    let destination = scratch + ".out"
    do {
        let file = try FileDescriptor.open(input, access: .writeOnly, options: [.create, .truncate])
        if let data, size > 0 { try file.write(UnsafeRawBufferPointer(start: data, count: size)) }
        try file.close()
    } catch {
        fatalError("fuzz harness cannot write its scratch file: \(error)")
    }
    var limits = ZipLimits()
    // Small limits keep each run fast; the code paths are the same.
    limits.maximumTotalSize = 64 << 20
    limits.maximumEntrySize = 64 << 20
    limits.maximumEntries = 10_000
    do {
        let archive = try ZipArchive.open(input, limits: limits)
        _ = try? archive.snapshot()
        for entry in archive.entries.prefix(8) { _ = try? archive.contents(of: entry) }
        try archive.verify(workers: 1)
        try? FileSystem.removeTree(destination)
        try archive.extract(to: destination, workers: 1)
        try? FileSystem.removeTree(destination)
    } catch is ZipError {
        // Refused: the expected outcome for most inputs.
    } catch let error as FileSystemError {
        // Extraction may meet names the file system refuses (ENAMETOOLONG…): trouble, not a finding.
        _ = error
        try? FileSystem.removeTree(destination)
    } catch {
        fatalError("unexpected error type: \(error)")
    }
    return 0
}
