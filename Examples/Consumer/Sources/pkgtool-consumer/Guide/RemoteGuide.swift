// The code of the article "Syncing a package through object storage" (PackageRemote.docc),
// compiled. main.swift runs the parts that need no store (parsing, refusals, options) always,
// and the rest when PKGTOOL_CONSUMER_S3 names a bucket to sync with (s3://BUCKET/PREFIX, with
// the AWS_* variables of that store set).
import Foundation
import PackageCore
import PackageDocument
import PackageRemote

/// Where a remote lives and how to reach it, from the environment as every S3 tool reads it.
func guideRemoteSetup(_ url: String) throws -> (RemoteLocation, RemoteOptions) {
    let remote = try RemoteLocation(parsing: url)  // s3://BUCKET/PREFIX, checked as S3 does
    var options = try RemoteOptions.fromEnvironment()  // AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID…
    options.configuration.transport.concurrency = 8  // transfers in flight at once
    options.configuration.transport.maximumBytesPerSecond = 4 << 20  // per transfer; nil: no cap
    return (remote, options)
}

/// A malformed URL is refused before anything is sent.
func guideRemoteRefusal() -> String? {
    do {
        _ = try RemoteLocation(parsing: "s3://My_Bucket/notes")
        return nil
    } catch {
        return error.message  // s3:// URL 's3://My_Bucket/notes': the bucket name …
    }
}

/// Push a package, then pull the remote's latest version on another machine.
func guidePushAndPull(package: String, copy: String, remote: RemoteLocation, options: RemoteOptions) throws
    -> (PushResult, PullResult)
{
    let pushed = try PackageRemote.push(package, to: remote, options: options)
    print("version \(pushed.version.sequence) (\(pushed.version.shortID)): \(pushed.bytesUploaded) bytes sent")

    let pulled = try PackageRemote.pull(remote, to: copy, options: options)
    print("\(copy) is version \(pulled.version.sequence): \(pulled.bytesDownloaded) bytes fetched")

    for version in try PackageRemote.log(remote, options: options) {
        print(version.sequence, version.shortID, version.isoTime, version.size)
    }
    return (pushed, pulled)
}

/// A push refused because another device pushed first: nothing is lost, and the
/// person decides what the next version is.
func guidePushOrExplain(package: String, remote: RemoteLocation, options: RemoteOptions) throws -> Bool {
    do {
        _ = try PackageRemote.push(package, to: remote, options: options)
        return true
    } catch let error as RemoteError where error.kind == .conflict {
        print(error)  // the remote moved on: … 'pkgtool sync …' merges both, or pull …
        return false
    }
}

/// Sync: push, pull, or merge both sides' changes and push the merge, with the remote (and
/// endpoint) the package remembers; conflicts are kept inside the package until resolved.
func guideSync(package: String, options: RemoteOptions) throws -> SyncResult {
    let result = try PackageRemote.sync(package, with: nil, options: options)
    for conflict in result.conflicts { print(conflict.path, conflict.side, conflict.hash) }
    return result
}

/// Progress into a progress tree, and cancellation from another thread.
func guideProgressAndCancellation(package: String, remote: RemoteLocation, options: RemoteOptions) throws {
    let progress = ProgressManager(totalCount: 1)
    var options = options
    let cancellation = TransferCancellation()
    options.cancellation = cancellation  // cancellation.cancel() stops every transfer at once
    _ = try PackageRemote.push(package, to: remote, options: options, progress: progress.subprogress(assigningCount: 1))
    print("\(Int(progress.fractionCompleted * 100)) %")
}

/// A document saved, then pushed: the document host's save, then the library's push, off
/// the main actor; cancelling the task cancels the push.
@MainActor
func guideSaveThenPush(_ session: DocumentSession<BoardDocument>, remote: RemoteLocation, options: RemoteOptions)
    async throws -> PushResult?
{
    try await session.save()
    guard let url = session.configuration.fileURL else { return nil }
    return try await PackageRemote.push(url.path, to: remote, options: options)
}

/// The guide's code that needs no store, then, when `PKGTOOL_CONSUMER_S3` names a remote,
/// the rest against it.
@MainActor
func runRemoteGuide(in work: String, package: String) async throws {
    try check(guideRemoteRefusal()?.contains("My_Bucket") == true, "a malformed s3:// URL is refused")
    guard let url = ProcessInfo.processInfo.environment["PKGTOOL_CONSUMER_S3"], !url.isEmpty else {
        print("remote guide: compiled; PKGTOOL_CONSUMER_S3 unset, nothing pushed")
        return
    }
    let (remote, options) = try guideRemoteSetup(url)
    let (pushed, pulled) = try guidePushAndPull(package: package, copy: work + "/Pulled.pkg", remote: remote, options: options)
    try check(pulled.version.id == pushed.version.id, "the pull brings the pushed version")
    try check(try rootHash(work + "/Pulled.pkg") == (try rootHash(package)), "the pulled package equals the pushed one")
    try check(try guidePushOrExplain(package: package, remote: remote, options: options), "an unchanged push succeeds")
    try check(try guideSync(package: package, options: options).action == .upToDate, "a synced package is up to date")
    try guideProgressAndCancellation(package: package, remote: remote, options: options)
    let session = try await DocumentSession.create { _, _ in BoardDocument() }
    session.document.title = "Synced"
    try await session.save(to: URL(fileURLWithPath: work + "/Synced.board"))
    let boardRemote = RemoteLocation(bucket: remote.bucket, prefix: remote.prefix + "/board")
    session.document.cards["1.txt"] = "pushed after its save"
    session.updateChangeCount(.done)
    let boardPush = try await guideSaveThenPush(session, remote: boardRemote, options: options)
    try check(boardPush?.createdVersion == true, "the saved board was pushed")
    print("remote guide: pushed, pulled, pushed a document after its save")
}
