// The code of the article "Choosing a save strategy" (PackageCore.docc), compiled and run.
import PackageCore

/// One save with each strategy and option the article discusses.
func guideStrategies(draft: String, package: String) throws -> [SaveStrategy] {
    var used: [SaveStrategy] = []
    // The default: work in proportion to the change; nothing kept beside the package.
    used.append(try PackageSaver.save(DirectorySource(draft), to: package).statistics.strategy)

    // Readers that know nothing of pkgtool must never see a half-applied save.
    let atomic = SaveOptions(strategy: .atomic)
    used.append(try PackageSaver.save(DirectorySource(draft), to: package, options: atomic).statistics.strategy)

    // The same guarantee at about journaled's cost, paid in disk space for the previous version.
    let keeping = SaveOptions(strategy: .atomic, keepsPrevious: true)
    used.append(try PackageSaver.save(DirectorySource(draft), to: package, options: keeping).statistics.strategy)

    // Rewrite everything (after a disk error, say).
    let full = SaveOptions(strategy: .full)
    used.append(try PackageSaver.save(DirectorySource(draft), to: package, options: full).statistics.strategy)

    // Data you can recreate: no fsync; a crash of the process is still survived, not one of the machine.
    let scratch = SaveOptions(durability: .none)
    used.append(try PackageSaver.save(DirectorySource(draft), to: package, options: scratch).statistics.strategy)

    // The package may have been edited behind pkgtool's back: check it before trusting the manifest.
    let checking = SaveOptions(trustManifest: false)
    used.append(try PackageSaver.save(DirectorySource(draft), to: package, options: checking).statistics.strategy)
    return used
}
