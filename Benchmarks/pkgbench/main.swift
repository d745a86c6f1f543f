import PackageBench

BenchmarkCommand.main()
