import PkgToolCLI

PkgTool.main()
