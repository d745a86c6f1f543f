import PkgToolCLI
import PkgToolRemoteCLI

// pkgtool with the sync commands' transfers linked in; pkgtool runs it for them.
PkgTool.main(commands: RemoteCommands.all)
