import PackageCore

/// `pkgtool hash PATH…`: content hashes of files (as `xxhsum -H2`) and trees (Merkle roots).
enum HashCommand: Command {
    static let spec = CommandSpec(
        name: "hash",
        summary: "print the XXH3-128 hash of files and directory trees",
        arguments: "[--json] [--jobs N] PATH...",
        options: [
            OptionSpec("json", help: "print a JSON array instead of text lines"),
            .jobs,
        ],
        positionals: 1...Int.max,
        details: """
            A regular file prints '<hash>  <path>', byte for byte what 'xxhsum -H2' prints;
            '-' hashes standard input ('<hash>  stdin', as xxhsum; ./- names a file '-').
            A directory prints its tree's root hash (a Merkle tree of XXH3-128): equal exactly when
            names, kinds, executable bits and contents are equal. Symbolic links inside a
            tree are hashed by their target text and never followed; a path given on the
            command line is followed, as xxhsum does. FIFOs, sockets and devices inside a
            tree are not package content: they are skipped with a warning, and so is a
            package's own .pkgtool directory (silently). A path holding a control character,
            '"' or '\\' is printed quoted, as git quotes names (xxhsum prints it raw).
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "every path was hashed"),
            ExitStatusMeaning(
                .trouble,
                "a path could not be hashed (missing, a FIFO, a dangling link, permission denied); the others were"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        // The cores are counted (a read of /sys and a syscall) only for a tree; a bad --jobs
        // is refused whatever the paths.
        let givenWorkers = arguments.value("jobs") == nil ? nil : try arguments.workers(usageLine: spec.usageLine)
        var output = HashOutput(console: console, asJSON: arguments.flag("json"))
        var status = ExitStatus.success
        let buffer = ChunkBuffer()
        for path in arguments.positionals {
            do {
                try hash(path, workers: givenWorkers, buffer: buffer, into: &output)
            } catch {
                // Like xxhsum: report and go on with the other paths; the exit status remembers.
                let reported = PkgTool.report(error, console: console)
                if reported.rawValue > status.rawValue { status = reported }
            }
        }
        output.finish()
        return status
    }

    /// Where results go: a line each as it comes, or with `--json` a record each, printed
    /// as one array at the end.
    private struct HashOutput {
        let console: Console
        let asJSON: Bool
        var records: [JSON] = []

        /// One path's result; only the form printed is built.
        mutating func add(_ record: @autoclosure () -> JSON, line: @autoclosure () -> String) {
            if asJSON { records.append(record()) } else { console.line(line()) }
        }

        /// Prints the JSON array, when that is the form.
        func finish() {
            if asJSON { console.line(JSON.array(records).serialized(pretty: true)) }
        }
    }

    /// Hashes one command-line path: `-` (standard input), a tree, or a file.
    private static func hash(_ path: String, workers: Int?, buffer: ChunkBuffer, into output: inout HashOutput) throws {
        if path == "-" {
            guard !output.console.inputWasClosed else {
                throw FileSystemError(.read, path: "standard input", errno: .badFileDescriptor)
            }
            let (hash, size) = try ContentHash.ofStandardInput(buffer: buffer)
            output.add(
                .object([
                    ("path", .string(path)), ("kind", .string("stdin")),
                    ("hash", .string(hash.description)), ("size", .int(size)),
                ]),
                line: "\(hash)  stdin")
            return
        }
        let target = try resolve(path)
        switch target.kind {
        case .directory:
            try hashTree(path, workers: workers, into: &output)
        default:
            let (hash, fileStatus) = try ContentHash.ofFile(atPath: path, buffer: buffer)
            output.add(
                .object([
                    ("path", .string(path)), ("kind", .string("file")),
                    ("hash", .string(hash.description)), ("size", .int(fileStatus.size)),
                ]),
                line: "\(hash)  \(NameQuoting.quoted(path))")
        }
    }

    /// A directory's root hash; what the scan skipped is warned about first.
    private static func hashTree(_ path: String, workers: Int?, into output: inout HashOutput) throws {
        let console = output.console
        let result = try PackageAccess.reading(path, warn: { console.warning($0) }) {
            try TreeScanner(
                workers: workers ?? ProcessInfoCores.active, excludedTopLevelNames: [PackageLayout.metadataDirectoryName]
            ).scan(path)
        }
        for skipped in result.skipped {
            console.warning("skipped '\(join(path, skipped.path))': a \(skipped.kind) is not package content")
        }
        let snapshot = result.snapshot
        output.add(
            .object([
                ("path", .string(path)), ("kind", .string("directory")),
                ("hash", .string(snapshot.rootHash.description)),
                ("entries", .int(snapshot.entries.count)),
                ("bytes", .int(snapshot.entries.reduce(Int64(0)) { $0 + ($1.kind == .regular ? $1.size : 0) })),
            ]),
            line: "\(snapshot.rootHash)  \(NameQuoting.quoted(path))")
    }

    /// The status of a command-line path, following a symbolic link; a dangling link says so.
    static func resolve(_ path: String) throws -> FileStatus {
        let failure: FileSystemError
        do {
            return try FileSystem.status(path, followSymlinks: true)
        } catch {
            failure = error
        }
        if failure.isNotFound, let link = try? FileSystem.status(path), link.kind == .symbolicLink {
            let target = (try? FileSystem.readSymbolicLink(path)) ?? "?"
            throw FileSystemError(.open, path: path, reason: "dangling symbolic link to '\(target)'")
        }
        throw failure
    }

    static func join(_ root: String, _ relative: String) -> String {
        root.hasSuffix("/") ? root + relative : root + "/" + relative
    }
}
