import Glibc

// What every fuzz target of pkgtool shares about its process: where its scratch world
// goes, where libFuzzer started it, and its optional commentary.

/// `$PKGTOOL_FUZZ_SCRATCH` (tmpfs when Scripts/fuzz finds one), or /tmp.
public let fuzzScratch: String = getenv("PKGTOOL_FUZZ_SCRATCH").map { String(cString: $0) } ?? "/tmp"

/// The working directory libFuzzer started in (its corpus and artifact paths may be relative).
public let launchDirectory: String = {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { ScratchFiles.fail("getcwd") }
    return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

/// Whether `PKGTOOL_FUZZ_VERBOSE` asks each step to say how it ended (to understand a corpus).
public let verbose = getenv("PKGTOOL_FUZZ_VERBOSE") != nil

/// Writes one line to standard error, without Foundation.
public func note(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
