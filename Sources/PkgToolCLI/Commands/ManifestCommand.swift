import PackageCore

/// `pkgtool manifest PKG`: record (or refresh) a package's manifest.
enum ManifestCommand: Command {
    static let spec = CommandSpec(
        name: "manifest",
        summary: "write or refresh a package's manifest (content hashes and stat cache)",
        arguments: "[--rehash] [--json] [--jobs N] PKG",
        options: [
            OptionSpec("rehash", help: "read every file even when the old manifest's stat data match"),
            OptionSpec("json", help: "print the result as JSON"),
            .jobs,
        ],
        positionals: 1...1,
        details: """
            Scans PKG and writes PKG/.pkgtool/index atomically, removing
            older delta files. Files whose stat data match a sound existing manifest are not
            reread unless --rehash is given; a damaged manifest is replaced.
            Prints the root hash, PKG (quoted as git quotes names when it holds a control
            character, '"' or '\\') and the number of entries.
            """,
        exitStatuses: [
            ExitStatusMeaning(.success, "the manifest was written"),
            ExitStatusMeaning(.trouble, "usage error; PKG missing, not a directory, unreadable, or the write failed"),
        ])

    static func run(_ arguments: ParsedArguments, console: Console) throws -> ExitStatus {
        let workers = try arguments.workers(usageLine: spec.usageLine)
        let given = arguments.positionals[0]
        try SnapshotLoading.requireDirectory(given)
        // A package given as a symbolic link is the directory it names.
        let path = try FileSystem.followingFinalSymbolicLinks(given)
        // Writing the manifest is a save of metadata: an exclusive scope, which recovers an
        // interrupted save first.
        let scan = try PackageScope.withPackage(at: path, access: .exclusive, warn: { console.warning($0) }) { package in
            // The old manifest serves as the stat cache only, and goes before the tree is assembled.
            let scan = try PackageScan.scan(
                package.path, useManifest: !arguments.flag("rehash"), workers: workers, keepingManifest: false,
                recordingHashedPaths: false)
            if let problem = scan.manifestProblem { console.warning("\(problem); replacing it") }
            SnapshotLoading.reportSkipped(scan.result, root: given, console: console)
            try PackageManifest.writeIndex(
                scan.snapshot, packagePath: package.path, durability: .full,
                packageIdentity: try FileSystem.status(package.path).inode)
            return scan
        }
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("path", .string(given)), ("root_hash", .string(scan.snapshot.rootHash.description)),
                    ("entries", .int(scan.snapshot.entries.count)), ("files_read", .int(scan.result.filesHashed)),
                ]).serialized(pretty: true))
        } else {
            console.line("\(scan.snapshot.rootHash)  \(NameQuoting.quoted(given))  (\(scan.snapshot.entries.count) entries)")
        }
        return .success
    }
}
