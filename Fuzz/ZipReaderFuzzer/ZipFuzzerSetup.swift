import Glibc

/// Called by libFuzzer before anything else. With `PKGTOOL_FUZZ_WRITE_SEEDS=DIR`, writes the
/// seeds into DIR and exits instead of fuzzing (Scripts/fuzz does this once).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    guard let directory = getenv("PKGTOOL_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    do {
        try ZipSeeds.write(to: directory)
    } catch {
        let message = Array("pkgtool-fuzz-zip: cannot write the seeds to '\(directory)': \(error)\n".utf8)
        _ = message.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        exit(2)
    }
    exit(0)
}
