import PackageCore

/// A change made to the source between two saves.
public enum Scenario: String, CaseIterable, Sendable, Codable {
    case noChange = "no-change"
    case smallEdit = "small-edit"
    case mediaPatch = "media-1mib"
    case mediaReplaced = "media-replaced"
    case tenPercent = "ten-percent"
    case everything = "everything"
    case rename = "rename"
    case addRemove = "page-add-remove"
    case largeFile = "large-file"

    /// What the scenario does, for tables and the report.
    public var title: String {
        switch self {
        case .noChange: return "no change"
        case .smallEdit: return "one small file edited"
        case .mediaPatch: return "1 MiB inside one media file and one JSON page changed"
        case .mediaReplaced: return "one media file replaced"
        case .tenPercent: return "10% of the files changed"
        case .everything: return "everything changed"
        case .rename: return "a file renamed"
        case .addRemove: return "a page added and one removed"
        case .largeFile: return "1 MiB changed at an arbitrary offset inside the largest media file"
        }
    }

    /// The scenarios `--quick` runs: the main ones, within its minute.
    public static let quick: [Scenario] = [.noChange, .smallEdit, .mediaPatch]

    /// The scenarios the save suite runs when none is named: all but `large-file`, which has
    /// its own suite (on the `media` shape).
    public static let saveSuiteDefaults: [Scenario] = allCases.filter { $0 != .largeFile }

    /// Whether the scenario makes sense for a shape (media scenarios need large files).
    public func applies(to shape: PackageShape) -> Bool {
        switch self {
        case .mediaPatch, .mediaReplaced, .largeFile: return shape.largeFiles > 0
        default: return true
        }
    }
}

/// What one edit changed in the source.
public struct Edit: Sendable, Codable, Equatable {
    /// Regular files whose content is new (written, replaced or added); renames and
    /// removals are not counted here.
    public var filesChanged = 0
    /// The sizes of those files: what an ideal incremental save must write (`large-file`:
    /// the bytes changed inside the file, what an ideal chunk-level save must write).
    public var bytesChanged: Int64 = 0
    public var renamed = 0
    public var removed = 0
    public var description = ""
}

/// The working source tree the scenarios edit in place, as an application would between
/// saves. Each edit is new (it never restores an earlier state), so every measured save
/// carries the same kind of change from the previous state to the next.
///
/// Every edited file gets a modification time one second later than the previous edit's
/// (in the past, on a fixed clock): rsync's quick check (size and mtime) then sees every
/// change, and no file falls in the manifest's "racy" window.
public final class SourceTree {
    public private(set) var package: GeneratedPackage
    /// Edits made so far: the clock of edit times and the version written into texts.
    public private(set) var edits = 0
    private var removed: Set<Int> = []
    private var addedPage: String?
    /// Renamed path → the generated name it started as.
    private var originalNames: [String: String] = [:]

    public init(_ package: GeneratedPackage) { self.package = package }

    var root: String { package.root }

    /// Regular files in the tree (page-add-remove adds one and removes one: constant).
    public var fileCount: Int { 1 + package.smallFiles.count + package.largeFiles.count }

    /// The file `small-edit` edits: the first JSON page from the middle on that holds at
    /// least 256 bytes (a 0-byte file cannot be edited keeping its size).
    private(set) lazy var editedPageIndex: Int = {
        let middle = (package.smallFiles.count / 2) / 4 * 4
        for index in stride(from: middle, to: package.smallFiles.count, by: 4) {
            if let size = try? FileSystem.status(root + "/" + package.smallFiles[index]).size, size >= 256 { return index }
        }
        return middle
    }()
    /// The page `page-add-remove` removes first.
    var firstRemovedPageIndex: Int { max(package.smallFiles.count / 3 / 4 * 4 + 2, 0) }

    /// Large files by rank of size: the median one is patched, the one at the first quarter
    /// replaced, the one at the third quarter renamed.
    func largeFileIndex(atRank fraction: Double) -> Int? {
        guard !package.largeFiles.isEmpty else { return nil }
        let order = package.largeFiles.indices.sorted {
            (package.largeFiles[$0].size, $0) < (package.largeFiles[$1].size, $1)
        }
        return order[min(Int(Double(order.count) * fraction), order.count - 1)]
    }

    /// The file `large-file` edits: the largest (the `media` shape's film).
    var largestFileIndex: Int? { largeFileIndex(atRank: 1) }

    /// Makes the scenario's change (a new one each call) and says what changed.
    public func apply(_ scenario: Scenario) throws -> Edit {
        edits += 1
        let time = GeneratedPackage.baseTime + Int64(3600 + edits) * 1_000_000_000
        var edit = Edit()
        switch scenario {
        case .noChange:
            edit.description = "nothing"
        case .smallEdit:
            let index = editedPageIndex
            try rewriteSmall(index, time: time, edit: &edit)
            edit.description = package.smallFiles[index]
        case .mediaPatch:
            guard let index = largeFileIndex(atRank: 0.5) else { throw BenchError("no media file to patch") }
            let file = package.largeFiles[index]
            let count = min(Int64(1 << 20), file.size)
            let offset = (file.size - count) / 2 / 4096 * 4096
            let handle = try FileDescriptor.open(root + "/" + file.path, access: .writeOnly)
            let buffer = ChunkBuffer()
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<Int(count)])
            var generator = SeededGenerator(seed: ShapeGenerator.mix(package.shape.seed, 0x5041_5443_4800 &+ UInt64(edits)))
            generator.fill(chunk)
            try handle.write(UnsafeRawBufferPointer(chunk), at: offset)
            try handle.setModificationTime(time)
            // And one small JSON file.
            var page = Edit()
            try rewriteSmall(editedPageIndex, time: time, edit: &page)
            edit.filesChanged = 1 + page.filesChanged
            edit.bytesChanged = file.size + page.bytesChanged
            edit.description =
                "\(Format.bytes(count)) at offset \(offset) of \(file.path) (\(Format.bytes(file.size))) and \(package.smallFiles[editedPageIndex])"
        case .largeFile:
            // 1 MiB of fresh bytes at an offset drawn from the seed and the edit's number:
            // any byte, not a block or chunk boundary, so every save meets an unaligned change.
            guard let index = largestFileIndex else { throw BenchError("no media file to change") }
            let file = package.largeFiles[index]
            let count = min(Int64(1 << 20), file.size)
            var generator = SeededGenerator(seed: ShapeGenerator.mix(package.shape.seed, 0x4C41_5247_4546 &+ UInt64(edits)))
            let offset = Int64(generator.next() % UInt64(file.size - count + 1))
            let handle = try FileDescriptor.open(root + "/" + file.path, access: .writeOnly)
            let buffer = ChunkBuffer()
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer.bytes[..<Int(count)])
            generator.fill(chunk)
            try handle.write(UnsafeRawBufferPointer(chunk), at: offset)
            try handle.setModificationTime(time)
            edit.filesChanged = 1
            edit.bytesChanged = count
            edit.description = "\(Format.bytes(count)) at offset \(offset) of \(file.path) (\(Format.bytes(file.size)))"
        case .mediaReplaced:
            guard let index = largeFileIndex(atRank: 0.25) else { throw BenchError("no media file to replace") }
            let file = package.largeFiles[index]
            let temporary = root + "/" + file.path + ".saving"
            try ShapeGenerator.writeRandomFile(
                temporary, size: file.size,
                seed: ShapeGenerator.mix(package.shape.seed, 0x5245_504C_0000 &+ UInt64(edits)), modificationTime: time)
            try FileSystem.rename(temporary, to: root + "/" + file.path)
            edit.filesChanged = 1
            edit.bytesChanged = file.size
            edit.description = "\(file.path) (\(Format.bytes(file.size))) replaced by a new file"
        case .tenPercent, .everything:
            let every = scenario == .everything ? 1 : 10
            let phase = scenario == .everything ? 0 : edits % 10
            for index in package.smallFiles.indices where index % every == phase && !removed.contains(index) {
                try rewriteSmall(index, time: time, edit: &edit)
            }
            for index in package.largeFiles.indices where index % every == phase {
                let file = package.largeFiles[index]
                try ShapeGenerator.writeRandomFile(
                    root + "/" + file.path, size: file.size,
                    seed: ShapeGenerator.mix(package.shape.seed, UInt64(edits) << 32 | UInt64(index)), modificationTime: time)
                edit.filesChanged += 1
                edit.bytesChanged += file.size
            }
            edit.description = "\(Format.count(edit.filesChanged)) files rewritten (\(Format.bytes(edit.bytesChanged)))"
        case .rename:
            if let index = largeFileIndex(atRank: 0.75) {
                let old = package.largeFiles[index].path
                let new = renamedPath(old)
                try FileSystem.rename(root + "/" + old, to: root + "/" + new)
                package.largeFiles[index].path = new
                edit.description = "\(old) → \(new) (\(Format.bytes(package.largeFiles[index].size)))"
            } else {
                let index = package.smallFiles.count * 3 / 4
                let old = package.smallFiles[index]
                let new = renamedPath(old)
                try FileSystem.rename(root + "/" + old, to: root + "/" + new)
                package.smallFiles[index] = new
                edit.description = "\(old) → \(new)"
            }
            edit.renamed = 1
        case .addRemove:
            let first = package.smallFiles[0]
            let folder = String(first[..<first.lastIndex(of: "/")!])
            let added = folder + "/added-" + ShapeGenerator.padded(edits, 6) + ".json"
            var bytes: [UInt8] = []
            var generator = SeededGenerator(seed: ShapeGenerator.mix(package.shape.seed, 0x4144_4400 &+ UInt64(edits)))
            let count = SmallContent.fill(&bytes, size: 4096, index: 0, version: edits, generator: &generator)
            try ShapeGenerator.writeFile(root + "/" + added, bytes: Array(bytes[..<count]), modificationTime: time)
            let gone: String
            if let previous = addedPage {
                gone = previous
            } else {
                removed.insert(firstRemovedPageIndex)
                gone = package.smallFiles[firstRemovedPageIndex]
            }
            try FileSystem.remove(root + "/" + gone)
            addedPage = added
            edit.filesChanged = 1
            edit.bytesChanged = Int64(count)
            edit.removed = 1
            edit.description = "added \(added), removed \(gone)"
        }
        return edit
    }

    /// Rewrites `count` small files spread evenly over the tree, in place, same sizes (the
    /// scale suite's edit): one every `files / count`, from an offset that moves with each
    /// call, so each edit touches files of its own across as many folders.
    public func rewriteSpread(_ count: Int) throws -> Edit {
        edits += 1
        let time = GeneratedPackage.baseTime + Int64(3600 + edits) * 1_000_000_000
        var edit = Edit()
        let files = package.smallFiles.count
        let chosen = min(count, files)
        guard chosen > 0 else { return edit }
        let step = files / chosen
        let offset = step > 1 ? (edits * 7) % step : 0
        for position in 0..<chosen {
            let index = position * step + offset
            guard !removed.contains(index) else { continue }
            try rewriteSmall(index, time: time, edit: &edit)
        }
        edit.description =
            "\(chosen) files rewritten in place across the tree, one every \(Format.count(step)) "
            + "(\(Format.count(edit.filesChanged)) with new bytes, \(Format.bytes(edit.bytesChanged)); the rest too small to change: new dates only)"
        return edit
    }

    /// Rewrites small file `index` in place with a new version of the same size. A file
    /// whose bytes come out the same (an empty one, a text shorter than its header) is
    /// rewritten all the same — its date changes — but not counted as changed.
    private func rewriteSmall(_ index: Int, time: Int64, edit: inout Edit) throws {
        let path = root + "/" + package.smallFiles[index]
        let size = Int(try FileSystem.status(path).size)
        var old = [UInt8](repeating: 0, count: max(size, 1))
        let file = try FileDescriptor.open(path)
        let read = try old.withUnsafeMutableBytes { try file.readFully(into: $0) }
        var bytes = [UInt8](repeating: 0, count: max(size, 1))
        var generator = SeededGenerator(seed: ShapeGenerator.mix(package.shape.seed, UInt64(edits) << 32 | UInt64(index)))
        let count = SmallContent.fill(&bytes, size: size, index: index, version: edits, generator: &generator)
        try bytes.withUnsafeBytes { buffer in
            try ShapeGenerator.writeFile(path, bytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]), modificationTime: time)
        }
        if read != count || old[..<read] != bytes[..<count] {
            edit.filesChanged += 1
            edit.bytesChanged += Int64(count)
        }
    }

    /// `media/clip-07.mp4` → `media/clip-07-r12.mp4`, always from the generated name.
    private func renamedPath(_ path: String) -> String {
        let original = originalNames[path] ?? path
        let slash = original.lastIndex(of: "/").map { original.index(after: $0) } ?? original.startIndex
        let dot = original[slash...].lastIndex(of: ".") ?? original.endIndex
        let renamed = String(original[..<dot]) + "-r" + String(edits) + String(original[dot...])
        originalNames[renamed] = original
        return renamed
    }
}
