// The fuzz target for a package's own metadata as untrusted input (issue 17): every input
// becomes a journal, a manifest (base and delta) and temporaries in a fresh scratch package
// with canaries around it (`ScratchWorld`); pkgtool then reads the manifest, recovers the
// package (validating the journal and, when it passes, applying it), reads it through
// `PackageAccess` and — when the input asks — saves a tree into it.
//
// A finding is a crash, a sanitizer report, a hang, a descriptor leaked, ANY change outside
// the package (a canary's bytes, mode, times, links or inode; a new or missing entry beside
// the package, above it, in the working directory or at the absolute canary), or a save with
// `--check-package` that succeeds without making the package the source. Errors and
// refusals are not findings: refusing is the job. Built only by Scripts/fuzz
// (PKGTOOL_FUZZ=1, -sanitize=fuzzer,address): libFuzzer provides `main`.
import FuzzSupport
import Glibc
import PackageCore

/// The world of this process, made on the first input.
nonisolated(unsafe) var scratchWorld: ScratchWorld?

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let input = MetadataCase(UnsafeRawBufferPointer(start: size > 0 ? data : nil, count: size))
    let home = launchDirectory
    if scratchWorld == nil {
        ScratchFiles.label = "pkgtool-fuzz-metadata"
        scratchWorld = ScratchWorld(scratch: fuzzScratch)
        // libFuzzer ends with exit(): leave no scratch world behind.
        atexit { scratchWorld.map { ScratchFiles.removeTree($0.base) } }
    }
    let world = scratchWorld!
    world.resetPackage()
    writeMetadata(input, in: world)

    let before = world.outsideState()
    let descriptors = ScratchFiles.openDescriptorCount()
    // pkgtool's code runs in an empty folder of its own: a path used relative to the
    // working directory instead of the package would land there, and be seen.
    guard chdir(world.workingDirectory) == 0 else { ScratchFiles.fail("chdir \(world.workingDirectory)") }
    exercise(input, package: world.package, source: world.source)
    guard chdir(home) == 0 else { ScratchFiles.fail("chdir back to \(home)") }
    ScratchWorld.requireUnchanged(before, world.outsideState(), outside: "the scratch package")
    let leaked = ScratchFiles.openDescriptorCount() - descriptors
    if leaked != 0 { fatalError("FINDING: \(leaked) file descriptors leaked") }
    return 0
}

/// What pkgtool does with a package it is handed: a reader that does not recover, the
/// probe, recovery under the lock, a consistent read, and maybe a save. With
/// `PKGTOOL_FUZZ_VERBOSE` set, says how each step ended (to understand a corpus).
func exercise(_ input: MetadataCase, package: String, source: String) {
    func step<R>(_ name: String, _ body: () throws -> R) {
        do {
            let result = try body()
            if verbose { note("\(name): \(result)") }
        } catch {
            if verbose { note("\(name) failed: \(error)") }
        }
    }
    step("load") { try PackageManifest.load(packagePath: package).map { "\($0.entryCount) entries" } }
    step("needsRecovery") { try PackageRecovery.needsRecovery(packagePath: package) }
    func read() {
        step("reading") {
            try PackageAccess.reading(package, warn: { if verbose { note("  warning: \($0)") } }) {
                try PackageManifest.load(packagePath: package).map { "\($0.entryCount) entries" }
            }
        }
    }
    if input.readsFirst { read() }
    step("recover") {
        let lock = try PackageLock.acquire(for: package, exclusive: true)
        defer { lock.release() }
        return try PackageRecovery.recover(packagePath: package, durability: input.durability)
    }
    read()
    if input.saves {
        let options = SaveOptions(
            strategy: input.strategy, durability: input.durability, workers: 1, trustManifest: input.trustsManifest)
        var saved = false
        step("save \(input.strategy)\(input.trustsManifest ? "" : " --check-package")") {
            let statistics = try PackageSaver.save(DirectorySource(source), to: package, options: options).statistics
            saved = true
            return statistics
        }
        // A save that checks the package first must leave it equal to the source, whatever
        // its metadata said (a trusted manifest is taken at its word, by design).
        if saved && !input.trustsManifest {
            let packageTree = try? PackageScan.scan(package, useManifest: false, workers: 1).snapshot
            let sourceTree = try? PackageScan.scan(source, useManifest: false, workers: 1).snapshot
            if packageTree?.rootHash != sourceTree?.rootHash {
                let changes = packageTree.flatMap { old in sourceTree.map { TreeDiff.changes(from: old, to: $0) } }
                fatalError("FINDING: a save that checked the package reported success, but the package is not the source: \(changes.map { "\($0)" } ?? "unreadable")")
            }
        }
        read()
    }
}


/// Writes `.pkgtool` (or what the layout puts in its place) into the fresh package.
func writeMetadata(_ input: MetadataCase, in world: ScratchWorld) {
    let package = world.package
    // Where the metadata files really go, and the link that leads there.
    let metadata: String
    switch input.layout {
    case .metadataOutside:
        metadata = world.outer + "/evil-meta"
        ScratchFiles.makeSymbolicLink(package + "/.pkgtool", target: "../evil-meta")
    default:
        metadata = package + "/.pkgtool"
    }
    ScratchFiles.makeDirectory(metadata, permissions: 0o700)
    let temporaries: String
    if input.layout == .temporariesOutside {
        temporaries = world.outer + "/evil-tmp"
        ScratchFiles.makeSymbolicLink(metadata + "/tmp", target: "../../evil-tmp")
    } else {
        temporaries = metadata + "/tmp"
    }
    ScratchFiles.makeDirectory(temporaries, permissions: 0o700)
    for (number, contents) in input.temporaries.enumerated() where !contents.isEmpty {
        let path = temporaries + "/t\(number)"
        switch input.temporaryKind(number) {
        case .file: ScratchFiles.writeFile(path, contents)
        case .symbolicLink:
            let target = String(decoding: contents.prefix(200).filter { $0 != 0 }, as: UTF8.self)
            ScratchFiles.makeSymbolicLink(path, target: target.isEmpty ? "../../../canary" : target)
        case .directory: ScratchFiles.makeDirectory(path)
        case .fifo: ScratchFiles.makeFIFO(path)
        }
    }
    if input.writesJournal {
        // Bound as recovery will see it: the root, and whatever stands at `.pkgtool/tmp`.
        let bytes = input.journalBytes(
            root: ScratchFiles.inode(package), temporaries: ScratchFiles.inode(metadata + "/tmp"))
        if input.layout == .journalOutside {
            ScratchFiles.writeFile(world.outer + "/evil-journal", bytes)
            ScratchFiles.makeSymbolicLink(metadata + "/journal", target: "../../evil-journal")
        } else {
            ScratchFiles.writeFile(metadata + "/journal", bytes)
        }
    }
    let index = input.indexBytes()
    if input.indexIsFIFO {
        ScratchFiles.makeFIFO(metadata + "/index")
    } else if input.writesIndex {
        ScratchFiles.writeFile(metadata + "/index", index)
    }
    if input.writesDelta {
        let delta = input.deltaFile(indexBytes: index)
        ScratchFiles.writeFile(metadata + "/" + delta.name, delta.bytes)
    }
}
