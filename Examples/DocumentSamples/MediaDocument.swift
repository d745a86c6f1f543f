// The guide's streaming writer (reference text, "Report progress with Subprogress"), in a
// minimal document around it, since the guide shows only the writer. The writer is the
// guide's, unchanged but for imports. The reader uses the quick reference's `@concurrent`
// form of a custom reader.
import Foundation
import Observation
import PackageDocument

struct MediaSnapshot { var payload: Data }

@Observable
final class MediaDocument: ReadableDocument, WritableDocument {
    static let readableContentTypes: [UTType] = [.mpeg4Movie]

    var payload = Data()

    struct Reader: DocumentReader {
        @concurrent
        func read(from source: URL, progress: consuming Subprogress) async throws -> sending MediaSnapshot {
            let progressManager = progress.start(totalCount: 1)
            let payload = try Data(contentsOf: source)
            progressManager.complete(count: 1)
            return MediaSnapshot(payload: payload)
        }
    }

    func reader(configuration: sending DocumentReadConfiguration) -> sending Reader { Reader() }

    func writer(configuration: sending DocumentWriteConfiguration) -> sending Writer { Writer() }

    @MainActor
    func apply(snapshot: sending MediaSnapshot, previous: sending MediaSnapshot?) async throws {
        payload = snapshot.payload
    }

    @MainActor
    func snapshot(contentType: UTType) async throws -> sending MediaSnapshot {
        MediaSnapshot(payload: payload)
    }
}

extension MediaDocument {
    struct Writer: DocumentWriter {
        nonisolated func write(
            content: sending MediaSnapshot, to destination: URL,
            previous: sending MediaSnapshot?, progress: consuming Subprogress
        ) async throws {
            let payload = content.payload
            let totalBytes = payload.count
            let chunkSize = 1 << 20                              // 1 MB
            let chunkCount = (totalBytes + chunkSize - 1) / chunkSize

            let progressManager = progress.start(totalCount: chunkCount)
            progressManager.totalByteCount = UInt64(totalBytes)

            try Data().write(to: destination)
            let fileHandle = try FileHandle(forWritingTo: destination)
            defer { try? fileHandle.close() }

            var offset = 0
            while offset < totalBytes {
                let end = min(offset + chunkSize, totalBytes)
                try fileHandle.write(contentsOf: payload[offset..<end])
                progressManager.completedByteCount += UInt64(end - offset)
                progressManager.complete(count: 1)
                offset = end
            }
        }
    }
}
