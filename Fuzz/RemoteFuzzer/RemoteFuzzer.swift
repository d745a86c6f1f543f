// The fuzz target for what a remote store serves (issue "A store is hostile"): the first
// byte of an input says what the rest is — a HEAD record, a pack, or a version manifest
// (named by its own SHA-256, as a pull fetches it) — and pkgtool decodes it as push, pull
// and log do. A version that decodes is then saved, as a pull saves it, into a scratch DEST
// with canaries around it (FuzzSupport's `ScratchWorld`), with each strategy in turn; DEST
// holds links that lead out of it, and the canary sits at a fixed absolute path, so that a
// version can aim at either.
//
// A finding is a crash, a sanitizer report, a hang, a descriptor leaked, ANY change outside
// DEST, or a save that reports success without DEST holding the version's tree. Refusals
// are not findings: refusing is the job. Built only by Scripts/fuzz (PKGTOOL_FUZZ=1,
// -sanitize=fuzzer,address): libFuzzer provides `main`.
import FuzzSupport
import Glibc
import PackageCore
import PackageRemote

/// The world of this process, made on the first input.
nonisolated(unsafe) var scratchWorld: ScratchWorld?

/// Made-up file contents stay small: the tree's shape is under test, not copying.
let maximumFileSize = 4096

/// Called by libFuzzer before anything else. With `PKGTOOL_FUZZ_WRITE_SEEDS=DIR`, writes the
/// seeds into DIR and exits instead of fuzzing (Scripts/fuzz does this once).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    guard let directory = getenv("PKGTOOL_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    ScratchFiles.label = "pkgtool-fuzz-remote"
    ScratchFiles.makeDirectory(directory)
    for sample in UntrustedRemoteObjects.samples() {
        ScratchFiles.writeFile(directory + "/" + sample.name, [sample.kind] + sample.bytes)
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard size > 0, let data else { return 0 }
    let kind = data[0]
    let object = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let strategy = [SaveStrategy.full, .atomic, .journaled][Int(kind / 4) % 3]
    switch kind % 4 {
    case 0:
        step("head") { try UntrustedRemoteObjects.headSequence(object).map { "sequence \($0)" } ?? "not a head record" }
    case 1:
        step("pack") { UntrustedRemoteObjects.packBlobLengths(object).map { "\($0.count) blobs" } ?? "refused" }
    case 2:
        // A whole manifest object, as fetched: most mutations are refused by its checksums.
        // A pull's decoder and a diff's (straight into a tree) must agree on every object.
        let asTree = try? UntrustedRemoteObjects.versionTreeEntryCount(object)
        let asVersion = try? UntrustedRemoteObjects.versionEntryCount(object)
        if asTree != asVersion {
            fatalError("FINDING: a diff decodes \(asTree.map { "\($0) entries" } ?? "a refusal"), a pull \(asVersion.map { "\($0) entries" } ?? "a refusal")")
        }
        // And a diff reading the cache's copy a piece at a time.
        let file = manifestFile()
        ScratchFiles.writeFile(file, object)
        let fromFile = try? UntrustedRemoteObjects.versionTreeEntryCount(readingFile: file, namedAs: object)
        if fromFile != asTree {
            fatalError("FINDING: a diff reading the cached file decodes \(fromFile.map { "\($0) entries" } ?? "a refusal"), from memory \(asTree.map { "\($0) entries" } ?? "a refusal")")
        }
        guard asVersion != nil else {
            step("version") { try UntrustedRemoteObjects.versionEntryCount(object) }
            return 0
        }
        saveVersion(strategy) { try UntrustedRemoteObjects.saveVersion(object, to: $0, strategy: strategy, maximumFileSize: maximumFileSize) }
    default:
        // An inflated body whose header a hostile store would compute to match: the entries
        // themselves — paths, kinds, links — reach the engine.
        guard object.count >= 3 else { return 0 }
        let packs = Int(object[0])
        let entries = Int(object[1]) | Int(object[2]) << 8
        let body = Array(object[3...])
        saveVersion(strategy) {
            try UntrustedRemoteObjects.saveVersion(
                body: body, entryCount: entries, packCount: packs, to: $0, strategy: strategy,
                maximumFileSize: maximumFileSize)
        }
    }
    return 0
}

/// Runs `save` into a fresh DEST — a new one, or one that already holds a package with
/// links leading out (`ScratchWorld.resetPackage`) for the journaled strategy, which needs
/// one — then checks the outside and DEST.
func saveVersion(_ strategy: SaveStrategy, _ save: (String) throws -> ContentHash) {
    if scratchWorld == nil {
        ScratchFiles.label = "pkgtool-fuzz-remote"
        scratchWorld = ScratchWorld(scratch: fuzzScratch, label: "remote")
        // libFuzzer ends with exit(): leave no scratch world behind.
        atexit { scratchWorld.map { ScratchFiles.removeTree($0.base) } }
    }
    let world = scratchWorld!
    let home = launchDirectory
    // An existing DEST for journaled saves (which need one), a new one otherwise.
    world.resetPackage()
    if strategy != .journaled { ScratchFiles.removeTree(world.package) }
    let before = world.outsideState()
    let descriptors = ScratchFiles.openDescriptorCount()
    // pkgtool's code runs in an empty folder of its own: a path used relative to the
    // working directory instead of DEST would land there, and be seen.
    guard chdir(world.workingDirectory) == 0 else { ScratchFiles.fail("chdir \(world.workingDirectory)") }
    var saved: ContentHash?
    step("save \(strategy)") {
        saved = try save(world.package)
        return saved!
    }
    guard chdir(home) == 0 else { ScratchFiles.fail("chdir back to \(home)") }
    ScratchWorld.requireUnchanged(before, world.outsideState(), outside: "DEST")
    if let saved {
        let scanner = TreeScanner(workers: 1, excludedTopLevelNames: [PackageLayout.metadataDirectoryName])
        let held = try? scanner.scan(world.package).snapshot.rootHash
        if held != saved {
            fatalError("FINDING: the save reported success, but DEST hashes to \(held.map { "\($0)" } ?? "nothing"), not \(saved)")
        }
    }
    let leaked = ScratchFiles.openDescriptorCount() - descriptors
    if leaked != 0 { fatalError("FINDING: \(leaked) file descriptors leaked") }
}

/// The scratch file a manifest object is written to for the cached-file decoder (removed at exit).
func manifestFile() -> String {
    if manifestPath == nil {
        let path = fuzzScratch + "/pkgtool-fuzz-remote-manifest-\(getpid())"
        manifestPath = path
        atexit { manifestPath.map { _ = unlink($0) } }
    }
    return manifestPath!
}
nonisolated(unsafe) var manifestPath: String?

/// Runs one step; with `PKGTOOL_FUZZ_VERBOSE`, says how it ended.
func step<R>(_ name: String, _ body: () throws -> R) {
    do {
        let result = try body()
        if verbose { note("\(name): \(result)") }
    } catch {
        if verbose { note("\(name) failed: \(error)") }
    }
}
