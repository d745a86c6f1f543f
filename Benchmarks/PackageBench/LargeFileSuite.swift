import Foundation
import PackageCore

/// Issue 13's benchmark: 1 MiB changed at an arbitrary offset inside the large media file
/// of a `media` package (a 64 MiB document beside one 1 GiB file; 4 GiB too in the full
/// run), brought up to date by every strategy, by `rsync -a` and by `rsync -a --inplace
/// --no-whole-file`, each on its own target, in the same interleaved rounds.
///
/// Twice per size: first with the targets beside the source on the work directory's file
/// system (ext4 here: no reflinks, so `journaled` patches in place and the staged
/// strategies write the file whole), then — when an XFS image can be mounted — with the
/// targets on a loop-mounted XFS image and the source where it was, where the staged
/// strategies clone the old version and write the changed chunks; there each job's
/// writes are the loop device's sectors written. Every target is compared with its source
/// byte for byte afterwards, and every package verified.
struct LargeFileSuite {
    /// The large media file's sizes, one package each.
    var sizes: [Int64]
    var entries: Int?
    /// The document around the large file (64 MiB; tests make it smaller).
    var documentBytes = PackageShape.mediaDocumentBytes
    var seed: UInt64
    var runs: Int
    var warmups = 1
    var fsyncPolicies = ["none", "full"]
    /// The run's directory: the suite makes `media-SIZE`, `media-SIZE-xfs` and the image in it.
    var directory: String
    var pkgtool: String
    var baseline: String?
    /// Also measure with the targets on an XFS image (when it can be mounted).
    var xfs = true
    /// Keep the last pass's data for the caller to remove (the other passes' data is
    /// removed as soon as they end: the next pass needs the disk space).
    var keep = false

    struct Result {
        var shapes: [ShapeRecord] = []
        var measurements: [JobMeasurement] = []
        var notes: [String] = []
        var checks: [Check] = []
    }

    /// Sizes above this are measured with the first fsync policy only (disk space: a
    /// package per strategy and policy, each as large as the file).
    static let bothPoliciesUpTo: Int64 = 1 << 30

    func run(progress: ProgressDisplay) throws -> Result {
        var result = Result()
        for size in sizes {
            let shape = PackageShape.make(.media, bytes: size, entries: entries, seed: seed, documentBytes: documentBytes)
            let policies = size <= Self.bothPoliciesUpTo ? fsyncPolicies : Array(fsyncPolicies.prefix(1))
            if policies.count < fsyncPolicies.count {
                result.notes.append("\(shape.slug): pkgtool measured with --fsync \(policies.joined(separator: ",")) only (disk space)")
            }
            progress.log("large-file suite: \(shape.label), on the work directory's file system")
            var ext4 = suite(shape, directory: "\(directory)/\(shape.slug)")
            ext4.fsyncPolicies = policies
            ext4.keep = keep && !xfs && size == sizes.last
            add(try ext4.run(progress: progress), to: &result)

            guard xfs else { continue }
            // The image holds a package per target and rsync's two copies; reflinked clones
            // and kept versions share the large file's blocks. Sparse: it uses what is written.
            let targets = 4 + (policies.count > 1 ? 1 : 0)
            let imageSize = max(shape.bytes * Int64(targets + 3) + (1 << 30), 1 << 30)
            let imageDirectory = "\(directory)/\(shape.slug)-xfs-image"
            let image: LoopImage
            do {
                do {
                    try DiskSpace.require(
                        bytes: shape.bytes * Int64(targets + 4), at: directory, for: "the XFS image of \(shape.label)")
                } catch let error as BenchError {
                    throw LoopImage.Skipped(error.description)
                }
                try FileSystem.makeDirectories(imageDirectory)
                image = try LoopImage.xfs(in: imageDirectory, size: imageSize)
            } catch let skipped as LoopImage.Skipped {
                result.notes.append("\(shape.slug): no XFS measurement: \(skipped)")
                try? FileSystem.removeTree(imageDirectory)
                progress.log("large-file suite: no XFS image (\(skipped))")
                continue
            }
            defer {
                try? image.unmount()
                try? FileSystem.removeTree(imageDirectory)
            }
            progress.log("large-file suite: \(shape.label), packages on XFS (\(image.device), \(Format.bytes(imageSize)) image)")
            var onXFS = suite(shape, directory: "\(directory)/\(shape.slug)-xfs")
            onXFS.targetDirectory = image.mountPoint
            onXFS.device = image
            onXFS.slugSuffix = "-xfs"
            // Every strategy without fsync (like rsync); atomic with each policy too: the
            // device's writes are counted after a flush either way.
            onXFS.fsyncPolicies = policies
            onXFS.includes = { _, strategy, fsync in fsync == policies[0] || strategy == "atomic" }
            onXFS.keep = false
            add(try onXFS.run(progress: progress), to: &result)
            try image.unmount()
        }
        return result
    }

    private func suite(_ shape: PackageShape, directory: String) -> SaveSuite {
        var suite = SaveSuite(
            shape: shape, scenarios: [.largeFile], runs: runs, warmups: warmups, directory: directory, pkgtool: pkgtool)
        suite.inplacePeerIn = { $0 == .largeFile }
        suite.copyPeerIn = { _ in false }
        suite.measureDiff = false
        suite.comparesBytes = true
        suite.baseline = baseline
        suite.keep = keep
        return suite
    }

    private func add(_ suite: SaveSuite.Result, to result: inout Result) {
        result.shapes.append(suite.shape)
        result.measurements += suite.measurements
        result.notes += suite.notes
        result.checks += suite.checks
    }
}
