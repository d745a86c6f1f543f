import PackageCore
import PackageRemote
import PkgToolCLI

/// `pkgtool diff PKG s3://…` (either order, or two remotes): a remote side is its latest
/// version's tree, read from its manifest without downloading any file.
enum RemoteDiff {
    static func snapshots(_ arguments: ParsedArguments, usageLine: String, workers: Int, console: Console) throws
        -> (old: TreeSnapshot, new: TreeSnapshot)
    {
        var options: RemoteOptions?
        func load(_ argument: String) throws -> TreeSnapshot {
            guard RemoteCommandSupport.isRemote(argument) else {
                return try SnapshotLoading.load(argument, workers: workers, console: console).snapshot
            }
            let location = try RemoteCommandSupport.location(argument, usageLine: usageLine)
            if options == nil { options = try RemoteCommandSupport.options(arguments, usageLine: usageLine) }
            // A RemoteError goes up as it is: one line, exit 2 (1 means "different" here).
            return try PackageRemote.snapshot(of: location, options: options!).snapshot
        }
        // A local side first: its scan's freed pages go back before the remote's tree is
        // decoded.
        let (first, second) = (arguments.positionals[0], arguments.positionals[1])
        if RemoteCommandSupport.isRemote(first) && !RemoteCommandSupport.isRemote(second) {
            let new = try load(second)
            ProcessEnvironment.releaseFreeMemory()
            return (try load(first), new)
        }
        let old = try load(first)
        ProcessEnvironment.releaseFreeMemory()
        return (old, try load(second))
    }
}
