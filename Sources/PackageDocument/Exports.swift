// A document app imports PackageDocument alone: FileWrapper, Subprogress, ProgressManager
// and the I/O errors come from PackageCore.
@_exported import PackageCore
