import FuzzSupport
import Glibc
import PackageCore

/// Called by libFuzzer before anything else. With `PKGTOOL_FUZZ_WRITE_SEEDS=DIR`, writes the
/// seeds into DIR and exits instead of fuzzing (Scripts/fuzz does this once).
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    guard let directory = getenv("PKGTOOL_FUZZ_WRITE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    do {
        try MetadataSeeds.write(to: directory)
    } catch {
        ScratchFiles.fail("cannot write the seeds to '\(directory)': \(error)")
    }
    exit(0)
}

/// Journal operations the seeds name tersely, encoded by pkgtool's own `SaveJournal`
/// (which encodes whatever it is given: paths its writer never would, included).
enum JournalSeed {
    enum Operation {
        case remove(String, FileKind)
        case makeDirectory(String, UInt32)
        case rename(String, String)
        case setPermissions(String, UInt32)
    }

    /// The bytes, bound to nothing (the harness patches the binding, then the checksum).
    static func encoded(_ operations: [Operation]) -> [UInt8] {
        let journal = SaveJournal(
            binding: .init(root: 0, temporaryDirectory: 0),
            operations: operations.map { operation in
                switch operation {
                case .remove(let path, let kind): .remove(path: path, kind: kind)
                case .makeDirectory(let path, let permissions): .makeDirectory(path: path, permissions: permissions)
                case .rename(let temporary, let path): .rename(temporary: temporary, path: path)
                case .setPermissions(let path, let permissions): .setPermissions(path: path, permissions: permissions)
                }
            })
        return journal.encoded()
    }
}

/// The seeds: real manifests written by pkgtool's saves, journals of every operation
/// aimed inside and outside the package, each metadata layout, saves of every strategy.
enum MetadataSeeds {
    static func write(to directory: String) throws {
        ScratchFiles.makeDirectory(directory)
        let world = ScratchWorld(scratch: fuzzScratch)
        defer { ScratchFiles.removeTree(world.base) }

        // Real manifests: of the source tree (which has folders where the package has
        // links leading out: a manifest that lies about them), and of the package as it is.
        let sourceManifest = try manifestFiles(savedFrom: world.source, in: world)
        world.resetPackage()
        let packageManifest = try manifestFiles(savedFrom: world.package, in: world)

        let content: [[UInt8]] = [Array("new content\n".utf8), Array("second\n".utf8), [0x41], Array("link-target".utf8)]
        var seeds: [(String, [UInt8])] = []
        func seed(
            _ name: String, control: [UInt8] = [0, 0, 0, 0], journal: [JournalSeed.Operation]? = nil,
            manifest: (index: [UInt8], delta: [UInt8]) = ([], []), temporaries: [[UInt8]]? = nil
        ) {
            var control = control
            if journal == nil { control[0] |= 0x01 }
            if manifest.index.isEmpty { control[0] |= 0x02 }
            if manifest.delta.isEmpty { control[0] |= 0x04 }
            seeds.append(
                (
                    name,
                    MetadataCase.framed(
                        control: control, journal: journal.map(JournalSeed.encoded) ?? [], index: manifest.index,
                        delta: manifest.delta, temporaries: temporaries ?? content)
                ))
        }

        // What a journaled save writes.
        let benign: [JournalSeed.Operation] = [
            .remove("b.bin", .regular), .remove("empty", .directory), .makeDirectory("new", 0o755),
            .makeDirectory("new/deeper", 0o700), .rename("t0", "new/deeper/file"), .rename("t1", "a.txt"),
            .rename("t3", "new/link"), .setPermissions("dir/c.txt", 0o644), .setPermissions("link", 0o600),
            .rename("t2", ".pkgtool/delta.2"), .remove(".pkgtool/delta.1", .regular),
        ]
        var linkTemporaries = content
        linkTemporaries[3] = Array("../a.txt".utf8)
        seed("benign", control: [0, 0, 0b1100_0000, 0], journal: benign, manifest: packageManifest, temporaries: linkTemporaries)
        seed("benign-unbound", control: [0x08, 0, 0, 0], journal: benign, manifest: packageManifest)
        seed("benign-temporaries-missing", control: [0, 0x40, 0, 0], journal: benign)
        for (number, layout) in ["normal", "tmp-outside", "metadata-outside", "journal-outside"].enumerated() {
            seed("layout-\(layout)", control: [0, UInt8(number) << 3, 0, 0], journal: benign, manifest: packageManifest)
        }

        // Every operation aimed at every way out.
        let outside = [
            "../canary", "../canary-dir/secret", "../../top-canary", "/tmp/pkgtool-fuzz-canary/secret",
            "out-link/secret", "out-link/sub/deep", "abs-link/secret", "dir/up-link", "out-link", "dir/../../canary",
            ".pkgtool/../../canary", "./a.txt", "a.txt/", "", "dir//c.txt", ".pkgtool/tmp/t1", ".pkgtool",
        ]
        for (number, path) in outside.enumerated() {
            seed("rename-\(number)", journal: [.rename("t0", path)])
            seed("remove-file-\(number)", journal: [.remove(path, .regular)])
            seed("remove-folder-\(number)", journal: [.remove(path, .directory)])
            seed("remove-link-\(number)", journal: [.remove(path, .symbolicLink)])
            seed("make-folder-\(number)", journal: [.makeDirectory(path + "/x", 0o777)])
            seed("chmod-\(number)", journal: [.setPermissions(path, 0o777)])
        }
        // Temporaries that are not the journal's own.
        for (number, temporary) in ["../../../canary", "../index", "/tmp/pkgtool-fuzz-canary/secret", "..", "t0/x"]
            .enumerated()
        {
            seed("steal-\(number)", journal: [.rename(temporary, "stolen")])
        }
        // A link put in place by the journal, then used as a folder by later operations.
        seed(
            "link-then-through", control: [0, 0, 0b01, 0],
            journal: [
                .rename("t0", "via"), .rename("t1", "via/secret"), .setPermissions("via/secret", 0o777),
                .remove("via/sub", .directory), .makeDirectory("via/new", 0o755),
            ], temporaries: [Array("../canary-dir".utf8), Array("x".utf8), [], []])

        // Manifests alone, read and trusted by saves of every strategy.
        for (name, manifest) in [("source-manifest", sourceManifest), ("package-manifest", packageManifest)] {
            seed(name, manifest: manifest)
            seed(name + "-index-only", manifest: (manifest.index, []))
            for strategy in 0..<3 {
                seed("\(name)-save-\(strategy)", control: [0x80, UInt8(strategy), 0, 0], manifest: manifest)
                seed("\(name)-save-\(strategy)-check", control: [0x80, UInt8(strategy) | 0x04, 0, 0], manifest: manifest)
            }
        }
        seed("source-manifest-loose-delta-name-save-1", control: [0x80, 0x01, 0, 0x01], manifest: sourceManifest)
        seed("index-fifo", control: [0, 0x80, 0, 0])
        seed("temporaries-fifo", control: [0, 0, 0xFF, 0], journal: benign)
        seed("save-without-manifest", control: [0x80, 0x01, 0, 0])
        seed("journal-then-save", control: [0x80, 0x01, 0, 0], journal: benign, manifest: packageManifest)

        for (name, bytes) in seeds {
            ScratchFiles.writeFile(directory + "/" + name, bytes)
        }
    }

    /// The index and first delta pkgtool writes for `tree`: a save, a change, a second save.
    private static func manifestFiles(savedFrom tree: String, in world: ScratchWorld) throws -> (
        index: [UInt8], delta: [UInt8]
    ) {
        let copy = world.base + "/seed-source"
        let package = world.base + "/seed-package"
        ScratchFiles.removeTree(copy)
        ScratchFiles.removeTree(package)
        // A copy, so that the tree itself is not touched (cp -a would do; this is libc).
        copyTree(tree, to: copy)
        let options = SaveOptions(strategy: .journaled, durability: .none, workers: 1)
        try PackageSaver.save(DirectorySource(copy), to: package, options: options)
        ScratchFiles.writeFile(copy + "/a.txt", Array("alpha, edited\n".utf8))
        try PackageSaver.save(DirectorySource(copy), to: package, options: options)
        let index = readFile(package + "/.pkgtool/index")
        let delta = ScratchFiles.names(in: package + "/.pkgtool").first { $0.hasPrefix("delta.") }.map {
            readFile(package + "/.pkgtool/" + $0)
        }
        ScratchFiles.removeTree(copy)
        ScratchFiles.removeTree(package)
        return (index, delta ?? [])
    }

    private static func copyTree(_ source: String, to target: String) {
        var status = stat()
        guard lstat(source, &status) == 0 else { return }
        switch status.st_mode & S_IFMT {
        case S_IFDIR:
            ScratchFiles.makeDirectory(target, permissions: status.st_mode & 0o7777)
            for name in ScratchFiles.names(in: source) { copyTree(source + "/" + name, to: target + "/" + name) }
        case S_IFLNK:
            var buffer = [CChar](repeating: 0, count: 4097)
            let count = readlink(source, &buffer, 4096)
            ScratchFiles.makeSymbolicLink(
                target, target: String(decoding: buffer.prefix(max(count, 0)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
        default:
            ScratchFiles.writeFile(target, readFile(source), permissions: status.st_mode & 0o7777)
        }
    }

    private static func readFile(_ path: String) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return [] }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return bytes
    }
}
