// An app file that imports the document API and its own model layer (AppVocabulary) and
// names the model's types unqualified, in type positions (where Swift does not pick
// between two types of one name by their members, but reports them ambiguous). It compiles
// only if `import PackageDocument` keeps the engine's internals (TreeChange, FileSystem,
// FileDescriptor, Errno, WorkQueue, ByteReader…) out of the app's namespace.
import AppVocabulary
import Foundation
import PackageDocument

/// Uses the app's types and the document API side by side; returns a line for the log.
func namespaceCheck() -> String {
    let folder: FileWrapper = FileWrapper(directoryWithFileWrappers: [:])
    folder.addRegularFile(withContents: Data("one".utf8), preferredFilename: "1.txt")
    let changes: [TreeChange] = [TreeChange(page: "1.txt", text: "one")]
    let handle: FileDescriptor = FileDescriptor(number: 3)
    let failure: Errno = Errno(code: 2)
    let fileSystem: FileSystem.Type = FileSystem.self
    let queue: WorkQueue = WorkQueue(jobs: fileSystem.pageNames(of: folder))
    let reader: ByteReader = ByteReader(bytes: [1, 2])
    let progress: ProgressManager = ProgressManager(totalCount: 1)
    progress.complete(count: 1)
    return "namespace: \(describeChanges(changes, in: folder)); \(handle.number) \(failure.code) "
        + "\(queue.jobs) \(reader.bytes.count) \(progress.fractionCompleted)"
}
