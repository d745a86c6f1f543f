// swift-tools-version:6.0
// pkgtool: content-hashed package trees, incremental crash-safe saves and ZIP for Linux.

import Foundation
import PackageDescription

let package = Package(
    name: "pkgtool",
    products: [
        .library(name: "PackageCore", targets: ["PackageCore"]),
        .library(name: "PackageZip", targets: ["PackageZip"]),
        .library(name: "PackageDocument", targets: ["PackageDocument"]),
        .library(name: "PackageRemote", targets: ["PackageRemote"]),
        .executable(name: "pkgtool", targets: ["pkgtool"]),
        // push, pull, log and diff with a remote side: pkgtool runs it for them (libcurl, libcrypto).
        .executable(name: "pkgtool-remote", targets: ["pkgtool-remote"]),
        .executable(name: "pkgbench", targets: ["pkgbench"]),
        .executable(name: "pkgbench-measure", targets: ["pkgbench-measure"]),
    ],
    targets: [
        // System libraries, found through pkg-config; apt names the package that provides them.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CXXHash",
            pkgConfig: "libxxhash",
            providers: [.apt(["libxxhash-dev"])]
        ),
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Linux syscalls and variadic calls Swift does not import (renameat2, copy_file_range, fcntl locks…).
        .target(name: "CSystemShims"),
        // XXH3-128 over libxxhash, its x86 vector code (AVX2, AVX-512) chosen at run time.
        .target(name: "CHashKernel", dependencies: ["CXXHash"]),

        // zlib for the one deflate/inflate/CRC-32 wrapper (Compression/) that ZIP and the
        // remote's version manifests share.
        .target(
            name: "PackageCore",
            dependencies: ["CSystemShims", "CHashKernel", "CXXHash", "CZlib"]
        ),
        // ZIP: reader, verifier, extractor, parallel writer and incremental repack (zlib).
        .target(name: "PackageZip", dependencies: ["PackageCore"]),
        // libcurl's variadic setters, one typed wrapper each.
        .target(name: "CCurlShims", dependencies: ["CCurl"]),
        // Sync through S3-compatible object storage (Specs/remote.md): SigV4 on libcrypto,
        // transfers on libcurl, content-addressed packs, versions moved by compare-and-swap.
        .target(name: "PackageRemote", dependencies: ["PackageCore", "CCurl", "CCurlShims", "CCrypto", "CXML2"]),
        // The command line, without the sync commands' transfers: pkgtool links no libcurl.
        .target(name: "PkgToolCLI", dependencies: ["PackageCore", "PackageZip"]),
        // push, pull, log and diff with an s3:// side, for pkgtool-remote, which pkgtool execs for them.
        .target(name: "PkgToolRemoteCLI", dependencies: ["PkgToolCLI", "PackageRemote", "PackageCore"]),
        // The document API of the guide (Specs/document.md): protocols, snapshots, a UI-free host.
        .target(name: "PackageDocument", dependencies: ["PackageCore", "PackageZip"]),
        // The guide's samples, corrected as Specs/document.md says, compiled and tested.
        .target(
            name: "PackageDocumentExamples", dependencies: ["PackageDocument"], path: "Examples/DocumentSamples"),
        .executableTarget(name: "pkgdoc-demo", dependencies: ["PackageDocumentExamples"], path: "Examples/pkgdoc-demo"),
        .executableTarget(name: "pkgtool", dependencies: ["PkgToolCLI"]),
        .executableTarget(name: "pkgtool-remote", dependencies: ["PkgToolRemoteCLI"]),

        // The benchmark harness: measures pkgtool against cp, rsync, zip, xxhsum… on generated data.
        // Its command line goes through the CLI's parser (PkgToolCLI's CommandSpec), as pkgtool's own does.
        .target(name: "PackageBench", dependencies: ["PackageCore", "PkgToolCLI", "PackageTestSupport"], path: "Benchmarks/PackageBench"),
        .executableTarget(name: "pkgbench", dependencies: ["PackageBench"], path: "Benchmarks/pkgbench"),
        // A tiny C launcher that measures one command from outside (peak RSS, bytes written).
        .executableTarget(name: "pkgbench-measure", path: "Benchmarks/pkgbench-measure"),

        // Helpers shared by the test targets (temporary directories, seeded data, fault
        // injectors) and, for its generators and the local SeaweedFS, the benchmark.
        .target(name: "PackageTestSupport", dependencies: ["PackageCore"], path: "Tests/PackageTestSupport"),
        // What the test targets alone share: Swift Testing traits (a missing prerequisite skips
        // a test, visibly; in CI it fails).
        .target(name: "PackageTestTraits", dependencies: ["PackageTestSupport"], path: "Tests/PackageTestTraits"),
        .testTarget(name: "PackageCoreTests", dependencies: ["PackageCore", "PackageTestSupport", "PackageTestTraits"]),
        .testTarget(
            name: "PackageDocumentTests",
            dependencies: ["PackageDocument", "PackageDocumentExamples", "PackageTestSupport", "PackageTestTraits"]),
        .testTarget(name: "PkgToolCLITests", dependencies: ["PkgToolCLI", "PackageCore", "PackageTestSupport", "PackageTestTraits"]),
        .testTarget(
            name: "PackageZipTests", dependencies: ["PackageZip", "PkgToolCLI", "PackageCore", "PackageTestSupport", "PackageTestTraits", "CZlib"]),
        .testTarget(
            name: "PackageRemoteTests",
            dependencies: [
                "PackageRemote", "PkgToolCLI", "PkgToolRemoteCLI", "PackageCore", "PackageDocument",
                "PackageDocumentExamples", "PackageTestSupport", "PackageTestTraits",
            ]),
        .testTarget(
            name: "PackageBenchTests", dependencies: ["PackageBench", "PackageCore", "PkgToolCLI", "PackageTestSupport", "PackageTestTraits"],
            path: "Tests/PackageBenchTests"),
    ]
)

// The libFuzzer targets, only when Scripts/fuzz asks for them (PKGTOOL_FUZZ=1, built with
// -sanitize=fuzzer,address). libFuzzer supplies `main`; each target has several files and
// none is main.swift, so Swift emits no entry point of its own (no -parse-as-library needed).
if ProcessInfo.processInfo.environment["PKGTOOL_FUZZ"] != nil {
    package.targets += [
        // The scratch world with canaries around a package, and the harness's own file
        // operations in plain libc, shared by the fuzzers that apply input to a package.
        .target(name: "FuzzSupport", path: "Fuzz/FuzzSupport"),
        // The ZIP reader: open, verify, snapshot, extract.
        .executableTarget(
            name: "pkgtool-fuzz-zip", dependencies: ["PackageZip", "PackageCore"], path: "Fuzz/ZipReaderFuzzer"),
        // A package's own metadata (journal, manifest) as untrusted input, applied to a
        // scratch package with canaries around it.
        .executableTarget(
            name: "pkgtool-fuzz-metadata", dependencies: ["PackageCore", "FuzzSupport"], path: "Fuzz/MetadataFuzzer",
            exclude: ["metadata.dict"]),
        // What a remote store serves (HEAD record, version manifest, pack trailer) as
        // untrusted input; a version that decodes is saved into a scratch DEST with
        // canaries around it, as a pull does.
        .executableTarget(
            name: "pkgtool-fuzz-remote", dependencies: ["PackageRemote", "PackageCore", "FuzzSupport"],
            path: "Fuzz/RemoteFuzzer"),
    ]
}
