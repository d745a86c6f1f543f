import Foundation

/// A reader built from a closure over the `FileWrapper` read at the source: the convenient
/// way to read flat files and packages alike.
///
/// The wrapper holds names and stat data; files are read when the closure asks for their
/// contents, so a package reader that touches only its metadata reads only that. The host
/// keeps the wrapper and hands it to the next `FileWrapperDocumentWriter` as the previous
/// version. The closure gets no `Subprogress`; the reader reports one unit for the read.
public struct FileWrapperDocumentReader<Snapshot>: DocumentReader {
    public typealias Source = URL

    private let configuration: DocumentReadConfiguration
    private let makeSnapshot: (FileWrapper) async throws -> sending Snapshot

    /// - Parameters:
    ///   - configuration: the configuration `reader(configuration:)` received.
    ///   - read: turns the wrapper into a snapshot; runs in the background. Handle errors of
    ///     children read on demand: one may have vanished since the package was opened.
    public init(
        _ configuration: sending DocumentReadConfiguration,
        read: @escaping (FileWrapper) async throws -> sending Snapshot
    ) {
        self.configuration = configuration
        makeSnapshot = read
    }

    /// Opens the wrapper at `source` (names and stat data only) and runs the closure.
    ///
    /// - Complexity: one `lstat` per entry of the package, plus what the closure reads.
    public nonisolated func read(from source: URL, progress: consuming Subprogress) async throws -> sending Snapshot {
        let manager = progress.start(totalCount: 1)
        let wrapper = try FileWrapper(url: source)
        configuration.fileWrapperHandoff.produced = wrapper
        let snapshot = try await makeSnapshot(wrapper)
        manager.complete(count: 1)
        return snapshot
    }
}
