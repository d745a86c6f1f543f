import Foundation
import PackageCore

/// Coordinates access to a document's file with other threads and processes, in the shape
/// of `NSFileCoordinator` (which Linux lacks).
///
/// A coordinated read takes the document's `PackageLock` shared, a coordinated write
/// exclusive, through the engine's `PackageScope`: the lock the save engine takes — a
/// `flock` on the document's file or package directory itself, so nothing is ever created
/// for it — so a read never sees a save half
/// done and two processes saving one document take turns. An item inside a package (a
/// page of a notebook) is coordinated through its package's lock. Coordinations nest
/// within a task (a write whose writer reads the same package does not wait for itself).
///
/// Get one from `URLDocumentConfiguration.makeFileCoordinator()` for each access.
public final class FileCoordinator: Sendable {
    /// Options of a coordinated read, as `NSFileCoordinator`'s; none changes what is locked.
    public struct ReadingOptions: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// Accepted for source compatibility; reads always see the saved state.
        public static let withoutChanges = ReadingOptions(rawValue: 1 << 0)
        /// Accepted for source compatibility.
        public static let resolvesSymbolicLink = ReadingOptions(rawValue: 1 << 1)
        /// Accepted for source compatibility.
        public static let immediatelyAvailableMetadataOnly = ReadingOptions(rawValue: 1 << 2)
    }

    /// Options of a coordinated write, as `NSFileCoordinator`'s; every write takes the
    /// exclusive lock, whichever is given.
    public struct WritingOptions: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: UInt
        /// The options whose bits are `rawValue`.
        public init(rawValue: UInt) { self.rawValue = rawValue }
        /// The item will be deleted. Accepted for source compatibility.
        public static let forDeleting = WritingOptions(rawValue: 1 << 0)
        /// The item will be moved. Accepted for source compatibility.
        public static let forMoving = WritingOptions(rawValue: 1 << 1)
        /// The item's contents will be merged with others. Accepted for source compatibility.
        public static let forMerging = WritingOptions(rawValue: 1 << 2)
        /// The item will be replaced. Accepted for source compatibility.
        public static let forReplacing = WritingOptions(rawValue: 1 << 3)
    }

    /// The document whose lock covers items inside it; nil to lock each item itself.
    let documentURL: URL?

    /// A coordinator for items of the document at `documentURL` (or for any item).
    public init(documentURL: URL? = nil) {
        self.documentURL = documentURL
    }

    // MARK: NSFileCoordinator's shape

    /// Runs `reader` with `url` while holding the shared lock. On failure to coordinate,
    /// `reader` is not called and `outError` receives the error.
    ///
    /// - Complexity: blocks until no writer holds the lock (a `flock(LOCK_SH)` wait).
    public func coordinate(
        readingItemAt url: URL, options: ReadingOptions = [], error outError: UnsafeMutablePointer<NSError?>?,
        byAccessor reader: (URL) -> Void
    ) {
        do { try coordinate(readingItemAt: url, options: options) { reader($0) } } catch {
            outError?.pointee = FileCoordinator.bridge(error)
        }
    }

    /// Runs `writer` with `url` while holding the exclusive lock. On failure to coordinate,
    /// `writer` is not called and `outError` receives the error.
    ///
    /// - Complexity: blocks until no reader or writer holds the lock.
    public func coordinate(
        writingItemAt url: URL, options: WritingOptions = [], error outError: UnsafeMutablePointer<NSError?>?,
        byAccessor writer: (URL) -> Void
    ) {
        do { try coordinate(writingItemAt: url, options: options) { writer($0) } } catch {
            outError?.pointee = FileCoordinator.bridge(error)
        }
    }

    // MARK: Throwing variants

    /// Runs `body` with `url` while holding the shared lock, and returns what it returns.
    ///
    /// - Complexity: blocks until no writer holds the lock; an interrupted save of the
    ///   package is recovered first, under the exclusive lock.
    public func coordinate<T>(
        readingItemAt url: URL, options: ReadingOptions = [], _ body: (URL) throws -> T
    ) throws -> T {
        try withLock(on: url, exclusive: false) { try body(url) }
    }

    /// Runs `body` with `url` while holding the exclusive lock, and returns what it returns.
    ///
    /// - Complexity: blocks until no reader or writer holds the lock.
    public func coordinate<T>(
        writingItemAt url: URL, options: WritingOptions = [], _ body: (URL) throws -> T
    ) throws -> T {
        try withLock(on: url, exclusive: true) { try body(url) }
    }

    // MARK: Internals

    /// The path whose lock covers `url`: the document's when `url` is inside it.
    func lockedPath(for url: URL) throws -> String {
        let path = try FileCoordinator.path(of: url)
        if let documentURL {
            let document = try FileCoordinator.path(of: documentURL)
            let folder = document.utf8.last == UInt8(ascii: "/") ? document : document + "/"
            if PathOrder.sameBytes(path, document) || PathOrder.hasBytePrefix(path, folder) {
                return document
            }
        }
        return path
    }

    private func withLock<T>(on url: URL, exclusive: Bool, _ body: () throws -> T) throws -> T {
        let path = try lockedPath(for: url)
        var entered = false
        do {
            return try PackageScope.withPackage(at: path, access: exclusive ? .exclusive : .shared) { package in
                entered = true
                try package.requireSettled()
                return try body()
            }
        } catch let refusal as SaveRefusal where !entered {
            throw FileCoordinator.explained(refusal, path: path)
        }
    }

    /// Runs `body` on `input` holding the lock on `url`, off the caller's actor, waiting for
    /// the lock on a thread outside Swift's cooperative pool (a blocked pool thread could
    /// starve the very task that holds the lock: `PackageScope` waits on a Dispatch thread).
    /// `input` is handed over whole (`sending`), so a reader or writer made on the main
    /// actor can run in the background.
    nonisolated func withLock<Input, Output>(
        on url: URL, exclusive: Bool, handingOver input: sending Input,
        _ body: @Sendable (sending Input) async throws -> sending Output
    ) async throws -> sending Output {
        let path = try lockedPath(for: url)
        // `input` was handed over whole; the scope's closure only forwards it.
        nonisolated(unsafe) let handedOver = input
        var entered = false
        do {
            return try await PackageScope.withPackage(at: path, access: exclusive ? .exclusive : .shared) { package in
                entered = true
                try package.requireSettled()
                return try await body(handedOver)
            }
        } catch let refusal as SaveRefusal where !entered {
            throw FileCoordinator.explained(refusal, path: path)
        }
    }

    /// The error of a coordination refused before it began: a write asked for inside a
    /// coordinated read of the same item (an upgrade would wait for itself) is Cocoa's
    /// file-locking error, as `NSFileCoordinator` would give.
    ///
    /// Coordinations go through the engine's `PackageScope`, as saves and readers do: a
    /// write takes the lock exclusive (on the item's folder when the item does not exist
    /// yet) and recovers an interrupted save first; a read lets an interrupted save be
    /// recovered (under the exclusive lock), then takes the lock shared — or not at all when
    /// there is no item to read — and, unlike a command that only reads, fails when the save
    /// cannot be finished (`OpenPackage.requireSettled()`): a document opened half recovered
    /// would be saved back as such. Nothing is created to lock.
    static func explained(_ refusal: SaveRefusal, path: String) -> any Error {
        guard case .lockedForReading = refusal.reason else { return refusal }
        return CocoaError(
            .fileLocking,
            userInfo: [
                NSFilePathErrorKey: path,
                NSLocalizedDescriptionKey: "cannot write '\(path)' inside a coordinated read of it",
            ])
    }

    static func path(of url: URL) throws -> String {
        guard url.isFileURL else {
            throw CocoaError(.fileReadUnsupportedScheme, userInfo: [NSURLErrorKey: url])
        }
        return RelativePath.trimmingTrailingSlashes(url.standardizedFileURL.path(percentEncoded: false))
    }

    /// An `NSError` for the out-parameter: Cocoa's file-locking error, carrying ours.
    static func bridge(_ error: any Error) -> NSError {
        if let cocoa = error as? CocoaError { return cocoa as NSError }
        return NSError(
            domain: NSCocoaErrorDomain, code: CocoaError.fileLocking.rawValue,
            userInfo: [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error as NSError])
    }
}
