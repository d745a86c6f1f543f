import Glibc
import PackageCore

/// What every open of an archive by path does about an in-place append's recovery record
/// (`AppendRecord`): finishes the recovery when it can, and otherwise reads the archive as
/// the record says it is.
///
/// An appender holds an exclusive OFD lock on the archive from before it writes the record
/// until after it removes it. Recovery takes the same lock (waiting for a live appender to
/// finish), so it only ever sees the record of an append that is over: completed (the file
/// ends with the recorded tail: the record is removed) or interrupted (the file is cut back
/// to the old length, synced, and the record removed). A reader that cannot write (a
/// read-only directory or file) leaves both alone and reads the first `oldLength` bytes of
/// an interrupted append, which are the old archive whole.
enum AppendRecovery {
    /// Recovers the archive at `path` if a record lies beside it and this process may write
    /// both. Never throws: whatever cannot be done is left to `readableLength`.
    static func recover(_ path: String) {
        let recordPath = AppendRecord.path(for: path)
        guard (try? FileSystem.statusIfExists(recordPath)) != nil else { return }
        guard let file = try? FileDescriptor.open(path, access: .readWrite, options: [.noFollow, .nonBlocking]),
            (try? file.lock(exclusive: true)) != nil
        else { return }
        // Read only now: the appender holding the lock may have finished (and removed it).
        guard let record = AppendRecord.read(at: recordPath), let status = try? file.status() else { return }
        switch try? record.verdict(for: file, status: status) {
        case .complete?, .stale?:
            try? FileSystem.remove(recordPath)
        case .incomplete?:
            // Recovery is rare: made durable whatever the pack's durability was.
            guard (try? file.truncate(to: record.oldLength)) != nil, (try? file.sync()) != nil else { return }
            try? FileSystem.remove(recordPath)
            try? FileSystem.syncDirectory(directory(of: path))
        case nil:
            return
        }
    }

    /// The bytes of `file` (the archive at `path`, with status `status`, read under a
    /// shared lock) to read as the archive: all of them, unless a record beside it says an
    /// append was interrupted (`recover` could not act): then the old length.
    static func readableLength(of file: borrowing FileDescriptor, path: String, status: FileStatus) -> Int64 {
        guard let record = AppendRecord.read(at: AppendRecord.path(for: path)),
            (try? record.verdict(for: file, status: status)) == .incomplete
        else { return status.size }
        return record.oldLength
    }

    /// The directory holding `path` ("." for a bare name), split on the byte "/".
    static func directory(of path: String) -> String {
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
