import PackageCore
import PackageRemote
import PkgToolCLI

/// `pkgtool diff PKG s3://…` (either order, or two remotes): a remote side is its latest
/// version's tree, read from its manifest without downloading any file.
///
/// One side is held whole — the package's tree, or the first remote's — and the other
/// remote's manifest is compared with it as it is decoded (`PackageRemote.comparison`): the
/// two trees handed back are pruned to where they differ, which `TreeDiff` reads as it would
/// the whole trees, so a diff never holds two whole trees.
enum RemoteDiff {
    static func snapshots(_ arguments: ParsedArguments, usageLine: String, workers: Int, console: Console) throws
        -> (old: TreeSnapshot, new: TreeSnapshot)
    {
        var options: RemoteOptions?
        func remoteOptions() throws -> RemoteOptions {
            if options == nil { options = try RemoteCommandSupport.options(arguments, usageLine: usageLine) }
            return options!
        }
        func load(_ argument: String) throws -> TreeSnapshot {
            guard RemoteCommandSupport.isRemote(argument) else {
                return try SnapshotLoading.load(argument, workers: workers, console: console).snapshot
            }
            let location = try RemoteCommandSupport.location(argument, usageLine: usageLine)
            // A RemoteError goes up as it is: one line, exit 2 (1 means "different" here).
            return try PackageRemote.snapshot(of: location, options: remoteOptions()).snapshot
        }
        func compare(_ held: TreeSnapshot, with argument: String) throws -> (held: TreeSnapshot, remote: TreeSnapshot) {
            let location = try RemoteCommandSupport.location(argument, usageLine: usageLine)
            return try PackageRemote.comparison(with: held, of: location, options: remoteOptions())
        }
        // The local side is the one held (its scan's freed pages go back before the remote's
        // manifest is read); with two remotes, the first.
        let (first, second) = (arguments.positionals[0], arguments.positionals[1])
        if RemoteCommandSupport.isRemote(first) && !RemoteCommandSupport.isRemote(second) {
            let pair = try compare(releasing(load(second)), with: first)
            return (pair.remote, pair.held)
        }
        let pair = try compare(releasing(load(first)), with: second)
        return (pair.held, pair.remote)
    }

    /// `tree`, once the pages freed while it was loaded went back to the system.
    private static func releasing(_ tree: TreeSnapshot) -> TreeSnapshot {
        ProcessEnvironment.releaseFreeMemory()
        return tree
    }
}
