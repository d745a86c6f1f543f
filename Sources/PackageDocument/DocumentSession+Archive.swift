import Foundation
import PackageZip

extension DocumentSession where Content: WritableDocument, Content.Writer.Destination == URL {
    /// Exports a package document as a ZIP archive at `url`: the package written as
    /// `packageType` into a hidden directory beside `url`, packed (Specs/zip.md), the
    /// directory removed. A failure or cancellation leaves `url` as it was and nothing else.
    func exportArchive(to url: URL, packageType: UTType) async throws {
        let archivePath = try FileCoordinator.path(of: url)
        let (parent, name) = (
            (archivePath as NSString).deletingLastPathComponent, (archivePath as NSString).lastPathComponent
        )
        let staging = URL(fileURLWithPath: PackageLayout.joined(
            parent.isEmpty ? "." : parent, "." + name + ".pkgtool-export-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)))
        defer { try? FileSystem.removeTree(staging.path) }
        do {
            try await write(to: staging, contentType: packageType, operation: .export)
            try Task.checkCancellation()
            let durability = self.durability
            try await Task.detached {
                _ = try ZipPacker.pack(
                    staging.path, to: archivePath, options: ZipPackOptions(durability: durability))
            }.value
        } catch let error as DocumentError {
            throw error
        } catch {
            throw record(DocumentSession.wrap(error, .export, url))
        }
    }
}
