// The code of the article "Saving a package incrementally" (PackageCore.docc), compiled and
// run here against the public API only. Scripts/doc-snippets checks that every Swift block
// of the articles is found in these files, so keep the two in step.
import Foundation
import PackageCore

/// A folder saved into a package, then saved again after one page changed.
func guideSaveDirectory(draft: String, package: String) throws -> [SaveStatistics] {
    var saves: [SaveStatistics] = []
    // First save: every file is written, and the package gets its manifest.
    let outcome = try PackageSaver.save(DirectorySource(draft), to: package)
    print("wrote \(outcome.statistics.filesWritten) files, root hash \(outcome.statistics.rootHash)")
    saves.append(outcome.statistics)

    // One page changes: the next save writes that file alone.
    try Data("page three, revised\n".utf8).write(to: URL(fileURLWithPath: draft + "/pages/3.txt"))
    let again = try PackageSaver.save(DirectorySource(draft), to: package).statistics
    print("\(again.filesWritten) file written (\(again.bytesWritten) bytes) by the \(again.strategy) strategy")
    saves.append(again)
    return saves
}

/// A save reporting progress, and a save that can be cancelled from another thread.
func guideSaveWithProgress(draft: String, package: String) throws -> SaveStatistics {
    let overall = ProgressManager(totalCount: 1)
    try PackageSaver.save(DirectorySource(draft), to: package, progress: overall.subprogress(assigningCount: 1))
    print("progress: \(overall.fractionCompleted)")

    let cancellation = SaveCancellation()
    var options = SaveOptions()
    options.cancellation = cancellation  // cancellation.cancel(), from any thread, stops the save
    options.progress = { progress in
        if progress.completedFiles == progress.totalFiles { print("\(progress.totalFiles) files saved") }
    }
    return try PackageSaver.save(DirectorySource(draft), to: package, options: options).statistics
}

/// What a failed save tells, and what it leaves.
func guideSaveHandlingErrors(draft: String, package: String) -> Bool {
    do {
        try PackageSaver.save(DirectorySource(draft), to: package)
        return true
    } catch let refusal as SaveRefusal {
        // The input was refused (a source file changed while it was being saved, a name the
        // package cannot hold): nothing changed; fix the input or save again.
        print("not saved: \(refusal)")
    } catch is CancellationError {
        print("cancelled: the package keeps its last version")
    } catch {
        // A FileSystemError names the path, the system call and the errno.
        print("not saved: \(error)")
    }
    return false
}

/// A package read into memory, one page replaced, and the tree saved in place.
func guideEditInPlace(package: String) throws -> SaveOutcome {
    let url = URL(fileURLWithPath: package)
    let root = try FileWrapper(url: url)  // names and stat data only: no file is read yet
    let pages = root.fileWrappers?["pages"]
    if let old = pages?.fileWrappers?["1.txt"] { pages?.removeFileWrapper(old) }
    pages?.addRegularFile(withContents: Data("page one, edited\n".utf8), preferredFilename: "1.txt")
    // In place: only the edited folder is visited, only the new page is written.
    return try root.write(to: url, originalContentsURL: url, saveOptions: SaveOptions())
}

/// The same tree written somewhere new: a complete package, manifest included.
func guideCopyTree(package: String, copy: String) throws -> SaveStatistics {
    let root = try FileWrapper(url: URL(fileURLWithPath: package))
    let outcome = try PackageSaver.save(FileWrapperSource(root, adoptsPackage: false), to: copy)
    return outcome.statistics
}
