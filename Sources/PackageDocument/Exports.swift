// What `import PackageDocument` gives an app from PackageCore: the types the document API
// hands it or takes from it, and nothing more. Re-exporting the whole engine would pour
// its internals' names (TreeChange, PackageLock, WorkQueue…) into every app's namespace,
// where they collide with the app's own types or another library's. An app that wants the
// engine itself imports PackageCore. Examples/Consumer proves it (AppVocabulary).
@_exported import class PackageCore.FileWrapper
@_exported import class PackageCore.ProgressManager
@_exported import struct PackageCore.Subprogress
@_exported import struct PackageCore.SaveStatistics
@_exported import class PackageCore.SaveCancellation
@_exported import enum PackageCore.Durability
@_exported import struct PackageCore.FileSystemError
@_exported import struct PackageCore.ConflictVersion
@_exported import enum PackageCore.ConflictKeep
