import Foundation
import Glibc
import PackageCore

/// Issue 30's "a million files works": for each number of files, a `small-files` package
/// (0–4 KiB pages, 100 to a folder, ten folders to a group) taken through every operation
/// pkgtool offers, each beside the tool people would use instead, on the same machine and
/// the same store: first save (vs `cp -a` and `rsync -a`, each followed by `sync -f`), a
/// no-change save and a 100-file edit (vs `rsync -a --delete`), a no-change diff (vs
/// `rsync -a --delete --dry-run`), a first pack (vs `zip -r -q`), a first push to SeaweedFS
/// (vs `restic backup`) and a fresh pull (vs `restic restore`). Time and peak RSS of each.
///
/// The points run one after the other (each removed before the next is generated: a
/// million files and their copies do not fit beside the others); inside a point every
/// operation's jobs are interleaved, round by round. From `singleRunFrom` files a point
/// gets one run and no warm-up.
struct ScaleSuite {
    var entries: [Int]
    var runs: Int
    var warmups: Int
    var seed: UInt64
    var directory: String
    var pkgtool: String
    /// Keep the last point's data.
    var keep = false

    /// From this many files a point gets one run and no warm-up (time and disk).
    static let singleRunFrom = 1_000_000
    /// Files the edit rewrites, spread over the tree.
    static let editedFiles = 100
    /// Issue 30's memory goal: 32 MiB plus 300 bytes per entry.
    static let fixedMemory: Int64 = 32 << 20
    static let bytesPerEntry = 300.0

    /// The operations, in the order they run at each point (the measurements' `scenario`).
    enum Operation: String, CaseIterable {
        case firstSave = "first-save"
        case noChange = "no-change"
        case edit = "edit-100"
        case diff
        case pack
        case push
        case pull

        var title: String {
            switch self {
            case .firstSave: return "first save into a fresh directory (default durability; peers sync at the end)"
            case .noChange: return "no-change save"
            case .edit: return "save after \(ScaleSuite.editedFiles) files edited across the tree"
            case .diff: return "no-change diff"
            case .pack: return "first pack into a new archive"
            case .push: return "first push to SeaweedFS (a new prefix or repository each run)"
            case .pull: return "fresh pull into a new directory"
            }
        }
    }

    struct Result {
        var shapes: [ShapeRecord]
        var measurements: [JobMeasurement]
        var checks: [Check]
        var notes: [String]
    }

    /// The programs the peers run; restic and the store are optional (push and pull are
    /// left out, with a note, without them).
    struct Tools {
        var sh: String
        var rsync: String
        var zip: String?
        var restic: String?
    }

    func run(progress: ProgressDisplay) throws -> Result {
        guard let rsync = Spawn.which("rsync") else { throw BenchError("the scale suite needs rsync") }
        let tools = Tools(sh: "/bin/sh", rsync: rsync, zip: Spawn.which("zip"), restic: Spawn.which("restic"))
        try FileSystem.makeDirectories(directory)
        defer { if !keep { try? Removal.removeTree(directory, parallelDepth: 1) } }
        var result = Result(shapes: [], measurements: [], checks: [], notes: [])
        if tools.zip == nil { result.notes.append("scale: zip is not installed: pack measured without its peer") }
        var store: SeaweedStore?
        if tools.restic == nil {
            result.notes.append("scale: restic is not installed: push and pull left out (apt-get install restic)")
        } else {
            progress.log("scale suite: starting SeaweedFS")
            do {
                store = try SeaweedStore(directory: directory + "/seaweedfs") { progress.log($0) }
                for bucket in ["bench-pkgtool", "bench-restic"] { try store?.rclone(["mkdir", "bench:\(bucket)"]) }
            } catch {
                result.notes.append("scale: push and pull left out: SeaweedFS did not start (\(error))")
                store = nil
            }
        }
        defer { store?.stop() }
        for (index, files) in entries.enumerated() {
            let single = files >= Self.singleRunFrom
            let point = try ScalePoint(
                files: files, seed: seed, directory: "\(directory)/files-\(files)", pkgtool: pkgtool,
                runs: single ? 1 : runs, warmups: single ? 0 : warmups, progress: progress)
            point.tools = tools
            point.store = store
            let outcome = point.measureAll(progress: progress)
            result.shapes.append(point.record)
            result.measurements += outcome.measurements
            result.notes += outcome.notes
            result.checks += Self.checks(outcome.measurements, files: files, equal: outcome.equal)
            if single {
                result.notes.append("scale: \(Format.count(files)) files: one run of each job, no warm-up (time and disk)")
            }
            if !keep || index < entries.count - 1 {
                progress.log("removing \(point.directory)")
                try Removal.removeTree(point.directory, parallelDepth: 2)
            }
        }
        result.notes.append(
            "scale: points run one after another, each removed before the next (disk space); inside a point each "
                + "operation's jobs are interleaved; pkgtool save with its default durability (fsync full), cp -a and "
                + "rsync -a followed by sync -f on their copy; pkgtool pull --fsync none beside restic restore (which "
                + "never fsyncs); pkgtool pushes the package the first save made, restic backs up the source (the same files)")
        return result
    }

    /// Issue 30's goals at one point: the peak RSS of every pkgtool job within 32 MiB +
    /// 300 B per file, and every copy equal to the source.
    static func checks(_ measurements: [JobMeasurement], files: Int, equal: Bool) -> [Check] {
        var checks: [Check] = []
        let ours = measurements.filter { $0.tool == "pkgtool" && $0.peakRssBytes != nil }
        if let worst = ours.max(by: { ($0.peakRssBytes ?? 0) < ($1.peakRssBytes ?? 0) }), let peak = worst.peakRssBytes {
            let limit = fixedMemory + Int64(bytesPerEntry * Double(files))
            checks.append(
                Check(
                    suite: "scale",
                    name: "\(Format.count(files)) files: largest peak RSS of pkgtool's jobs (\(worst.scenario ?? ""): \(worst.job))",
                    value: Double(peak), shown: "\(Format.bytes(peak)) (\(perEntry(peak, files: files)))",
                    want: "≤ \(Format.bytes(limit)) (32 MiB + 300 B/file)", met: peak <= limit,
                    source: "memory grows by a few hundred bytes a file, so a million files fit a small machine"))
        }
        checks.append(
            Check(
                suite: "scale", name: "\(Format.count(files)) files: package, rsync's copy and the pulled package equal the source",
                value: equal ? 1 : 0, shown: equal ? "equal" : "DIFFERENT", want: "equal", met: equal,
                source: "every figure is of work done right"))
        return checks
    }

    /// "(peak − 32 MiB) / N" in bytes per file: "212 B/file", or "≤ 32 MiB" below it.
    static func perEntry(_ peak: Int64, files: Int) -> String {
        guard peak > fixedMemory, files > 0 else { return "≤ 32 MiB" }
        return String(format: "%.0f B/file", Double(peak - fixedMemory) / Double(files))
    }
}
