import PackageCore

/// The library leg of sweep (b): an in-memory `FileWrapper` tree read from the package,
/// one small file replaced, saved with `PackageSaver.save(_:to:options:)` in this process.
enum LibraryJobs {
    /// No library jobs yet: the save path for an in-memory tree is not on main.
    static func make(_ workspace: Workspace) throws -> [Job] { [] }

    static let notes = [
        "sweep (b) library leg: not measured — PackageSaver.save(_ tree: FileWrapper, to:options:) is not in this build yet"
    ]
}
