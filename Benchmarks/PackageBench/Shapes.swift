import Dispatch
import PackageCore
import Synchronization

/// A package the harness generates from a seed: its kind, how many bytes and entries.
///
/// The same shape and seed always give the same tree, byte for byte, with the same names
/// and modification times, so every figure can be reproduced from the JSON record.
public struct PackageShape: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable, CaseIterable {
        /// About 20,000 small JSON/text pages (half compressible text, half random bytes)
        /// in nested folders, plus about 40 random media files (the "document" package).
        case document
        /// 100,000 files of 0–4 KiB in nested folders: P2.
        case smallFiles = "small-files"
        /// A few multi-GiB files and a hundred small pages.
        case huge
        /// A 64 MiB document (2,000 pages and 8 media clips) plus one large media file
        /// (1 GiB by default): the shape of chunk-level saves.
        case media

        /// The shapes the save suite runs when none is named (`media` has its own suite,
        /// `large-file`).
        public static let saveSuiteDefaults: [Kind] = [.document, .smallFiles, .huge]
    }

    public var kind: Kind
    /// The content bytes asked for (files only). For `small-files` it follows from the count.
    public var bytes: Int64
    /// Small files (pages).
    public var smallFiles: Int
    /// Large files (media or huge files).
    public var largeFiles: Int
    public var seed: UInt64
    /// `media` only: the bytes of the document around the one large media file (its pages
    /// and clips); the large file holds the rest of `bytes`.
    public var documentBytes: Int64?

    public init(kind: Kind, bytes: Int64, smallFiles: Int, largeFiles: Int, seed: UInt64, documentBytes: Int64? = nil) {
        self.kind = kind
        self.bytes = bytes
        self.smallFiles = smallFiles
        self.largeFiles = largeFiles
        self.seed = seed
        self.documentBytes = documentBytes
    }

    /// The default document around a `media` shape's large file.
    public static let mediaDocumentBytes: Int64 = 64 << 20

    /// `media`: the one large media file's size (`bytes` less the document's).
    public var mediaFileBytes: Int64? { documentBytes.map { bytes - $0 } }

    /// The default shape of a kind, scaled by `bytes` (`--size`) and `entries` (`--entries`,
    /// the number of small files), either of which may be nil for the default.
    ///
    /// `document` keeps its 20,000 pages when only the size changes (the size sweep holds
    /// entries fixed) and puts the rest of the bytes in its media; `small-files` turns a
    /// size into a count of files (2 KiB on average); `huge` spreads the size over three
    /// files; for `media` the size is the large media file's (the document beside it keeps
    /// its `documentBytes`, 64 MiB by default, and `entries` sets its pages).
    public static func make(
        _ kind: Kind, bytes: Int64? = nil, entries: Int? = nil, seed: UInt64, documentBytes: Int64 = mediaDocumentBytes
    ) -> PackageShape {
        switch kind {
        case .document:
            return PackageShape(
                kind: kind, bytes: bytes ?? 1 << 30, smallFiles: entries ?? 20_000, largeFiles: 40, seed: seed)
        case .smallFiles:
            let count = entries ?? bytes.map { Int(max($0 / 2048, 1)) } ?? 100_000
            return PackageShape(kind: kind, bytes: Int64(count) * 2048, smallFiles: count, largeFiles: 0, seed: seed)
        case .huge:
            return PackageShape(kind: kind, bytes: bytes ?? 6 << 30, smallFiles: entries ?? 100, largeFiles: 3, seed: seed)
        case .media:
            return PackageShape(
                kind: kind, bytes: (bytes ?? 1 << 30) + documentBytes, smallFiles: entries ?? 2_000, largeFiles: 9,
                seed: seed, documentBytes: documentBytes)
        }
    }

    /// "document, 256.0 MiB, 20,000 pages + 40 media files".
    public var label: String {
        switch kind {
        case .document:
            return "document, \(Format.bytes(bytes)), \(Format.count(smallFiles)) pages + \(largeFiles) media files"
        case .smallFiles:
            return "small-files, \(Format.count(smallFiles)) files of 0–4 KiB"
        case .huge:
            return "huge, \(Format.bytes(bytes)) in \(largeFiles) large files + \(smallFiles) pages"
        case .media:
            return "media, a \(Format.bytes(documentBytes ?? 0)) document (\(Format.count(smallFiles)) pages + "
                + "\(max(largeFiles - 1, 0)) clips) and one \(Format.bytes(mediaFileBytes ?? 0)) media file"
        }
    }

    /// A short name for directories and chart labels: "document-256MiB".
    public var slug: String {
        switch kind {
        case .smallFiles: return "small-files-\(smallFiles)"
        case .media: return "media-\(Format.compactBytes(mediaFileBytes ?? bytes))"
        default: return "\(kind.rawValue)-\(Format.compactBytes(bytes))"
        }
    }

    /// Size range of the small files.
    var smallFileSizes: ClosedRange<Int> { kind == .smallFiles ? 0...4096 : 200...8192 }
}

/// What the generator made: the paths the scenarios edit, and the totals.
public struct GeneratedPackage: Sendable, Codable {
    public struct LargeFile: Sendable, Codable, Equatable {
        public var path: String
        public var size: Int64
    }

    public var root: String
    public var shape: PackageShape
    /// Small files, relative to `root`, in generation order (even indices are text).
    public var smallFiles: [String]
    public var largeFiles: [LargeFile]
    /// Bytes of all regular files.
    public var totalBytes: Int64
    /// Files and directories below the root.
    public var entryCount: Int

    /// Every generated file's modification time: 2025-01-01T00:00:00Z, in nanoseconds. A
    /// fixed past date makes the tree reproducible and keeps it out of the manifest's
    /// "racy" window (an mtime not older than the manifest is always rehashed).
    public static let baseTime: Int64 = 1_735_689_600 * 1_000_000_000
}

/// Generates packages of a shape, in parallel on all cores, deterministic for a seed
/// whatever the number of threads (each folder and each large file has its own seed).
public enum ShapeGenerator {
    /// Small files per folder, and folders per group: `pages/g007/f3/p0007300.json`.
    static let filesPerFolder = 100
    static let foldersPerGroup = 10

    /// Generates `shape` at `root`, which must not exist.
    ///
    /// - Complexity: writes every byte once; one create and one futimens per file.
    public static func generate(_ shape: PackageShape, at root: String) throws -> GeneratedPackage {
        try FileSystem.makeDirectory(root)
        var entries = 0
        // metadata.json: a small text file every shape has.
        try writeFile(
            root + "/metadata.json",
            bytes: Array(#"{"format":"pkgbench","shape":"\#(shape.kind.rawValue)","seed":\#(shape.seed)}"#.utf8) + [10])
        entries += 1
        var total = Int64(0)
        total += try FileSystem.status(root + "/metadata.json").size

        // Small files, folder by folder in parallel.
        let pages = shape.kind == .smallFiles ? "files" : "pages"
        try FileSystem.makeDirectory(root + "/" + pages)
        entries += 1
        let folderCount = (shape.smallFiles + filesPerFolder - 1) / filesPerFolder
        let groupCount = (folderCount + foldersPerGroup - 1) / foldersPerGroup
        for group in 0..<groupCount {
            try FileSystem.makeDirectory(root + "/" + pages + "/" + groupName(group))
        }
        entries += groupCount + folderCount
        let smallBytes = try parallelMap(0..<folderCount) { folder -> Int64 in
            try writeFolder(folder, of: shape, root: root, pages: pages)
        }.reduce(0, +)
        total += smallBytes
        entries += shape.smallFiles
        var smallPaths: [String] = []
        smallPaths.reserveCapacity(shape.smallFiles)
        for index in 0..<shape.smallFiles { smallPaths.append(smallFilePath(index, pages: pages)) }

        // Large files.
        var large: [GeneratedPackage.LargeFile] = []
        if shape.largeFiles > 0 {
            let folder = shape.kind == .huge ? "large" : "media"
            try FileSystem.makeDirectory(root + "/" + folder)
            entries += 1
            let sizes = largeFileSizes(shape, remaining: max(shape.bytes - total, 0))
            let files = sizes.enumerated().map { index, size in
                GeneratedPackage.LargeFile(path: folder + "/" + largeFileName(index, of: sizes.count, kind: shape.kind), size: size)
            }
            // Largest first, so the last thread is not left alone with the biggest file.
            let order = files.indices.sorted { files[$0].size > files[$1].size }
            _ = try parallelMap(0..<files.count) { position -> Int64 in
                let index = order[position]
                try writeRandomFile(
                    root + "/" + files[index].path, size: files[index].size,
                    seed: mix(shape.seed, 0x4C41_5247_4500_0000 &+ UInt64(index)))
                return files[index].size
            }
            large = files
            total += sizes.reduce(0, +)
            entries += large.count
        }
        return GeneratedPackage(
            root: root, shape: shape, smallFiles: smallPaths, largeFiles: large, totalBytes: total,
            entryCount: entries)
    }

    // MARK: Names

    static func groupName(_ group: Int) -> String { "g" + padded(group, 3) }

    static func smallFilePath(_ index: Int, pages: String) -> String {
        let folder = index / filesPerFolder
        let name = "p" + padded(index, 7) + (index % 2 == 1 ? ".bin" : index % 4 == 0 ? ".json" : ".txt")
        return pages + "/" + groupName(folder / foldersPerGroup) + "/f" + String(folder % foldersPerGroup) + "/" + name
    }

    static func largeFileName(_ index: Int, of count: Int, kind: PackageShape.Kind) -> String {
        if kind == .huge { return "huge-\(index).bin" }
        // The media shape's last large file is its film; the others are the document's clips.
        if kind == .media && index == count - 1 { return "film.mov" }
        return "clip-" + padded(index, 2) + (index % 4 == 3 ? ".jpg" : ".mp4")
    }

    static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }

    // MARK: Sizes

    /// Large-file sizes adding up to `remaining` exactly. Media are log-uniform between 1 and
    /// 100 MiB before scaling (their mean, 21.5 MiB, makes 40 of them about the default
    /// document's 950 MiB); huge files are 3:4:5 shares; the `media` shape's clips share what
    /// its document's pages leave, and its last file is the large media file.
    static func largeFileSizes(_ shape: PackageShape, remaining: Int64) -> [Int64] {
        if shape.kind == .media, let film = shape.mediaFileBytes, shape.largeFiles >= 1 {
            var clips = shape
            clips.kind = .document
            clips.largeFiles = shape.largeFiles - 1
            return largeFileSizes(clips, remaining: max(remaining - film, 0)) + [film]
        }
        guard shape.largeFiles > 0 else { return [] }
        var generator = SeededGenerator(seed: mix(shape.seed, 0x5349_5A45))
        let weights: [Double] = (0..<shape.largeFiles).map { index in
            if shape.kind == .huge { return Double(3 + index % 3) }
            let unit = Double(generator.next() >> 11) / Double(1 << 53)
            return pow10(unit * 2)
        }
        let sum = weights.reduce(0, +)
        let minimum: Int64 = 4096
        var sizes = weights.map { max(Int64(Double(remaining) * $0 / sum) / 4096 * 4096, minimum) }
        let excess = sizes.reduce(0, +) - remaining
        if let largest = sizes.indices.max(by: { sizes[$0] < sizes[$1] }) {
            sizes[largest] = max(sizes[largest] - excess, minimum)
        }
        return sizes
    }

    private static func pow10(_ exponent: Double) -> Double {
        var result = 1.0
        var remaining = exponent
        while remaining >= 1 {
            result *= 10
            remaining -= 1
        }
        // 10^x = e^(x ln 10), x in [0, 1): a short series is plenty for sizing.
        let y = remaining * 2.302_585_092_994_046
        var term = 1.0
        var sum = 1.0
        for n in 1..<20 {
            term *= y / Double(n)
            sum += term
        }
        return result * sum
    }

    // MARK: Writing

    /// Writes one folder of small files; returns their bytes.
    private static func writeFolder(_ folder: Int, of shape: PackageShape, root: String, pages: String) throws -> Int64 {
        let first = folder * filesPerFolder
        let last = min(first + filesPerFolder, shape.smallFiles)
        let folderPath = root + "/" + pages + "/" + groupName(folder / foldersPerGroup) + "/f" + String(folder % foldersPerGroup)
        try FileSystem.makeDirectory(folderPath)
        var generator = SeededGenerator(seed: mix(shape.seed, UInt64(folder)))
        var bytes = [UInt8](repeating: 0, count: shape.smallFileSizes.upperBound)
        var total = Int64(0)
        let sizes = shape.smallFileSizes
        for index in first..<last {
            let size = sizes.lowerBound + Int(generator.next() % UInt64(sizes.count))
            let count = SmallContent.fill(&bytes, size: size, index: index, version: 0, generator: &generator)
            try bytes.withUnsafeBytes { buffer in
                try writeFile(root + "/" + smallFilePath(index, pages: pages), bytes: UnsafeRawBufferPointer(rebasing: buffer[..<count]))
            }
            total += Int64(count)
        }
        return total
    }

    /// A file of `size` seeded random bytes, written in 1 MiB chunks, with the base time.
    static func writeRandomFile(_ path: String, size: Int64, seed: UInt64, modificationTime: Int64 = GeneratedPackage.baseTime)
        throws
    {
        try FixtureWriter.randomFile(path, size: size, seed: seed)
        try FileDescriptor.open(path, access: .writeOnly).setModificationTime(modificationTime)
    }

    static func writeFile(_ path: String, bytes: [UInt8], modificationTime: Int64 = GeneratedPackage.baseTime) throws {
        try bytes.withUnsafeBytes { try writeFile(path, bytes: $0, modificationTime: modificationTime) }
    }

    static func writeFile(_ path: String, bytes: UnsafeRawBufferPointer, modificationTime: Int64 = GeneratedPackage.baseTime)
        throws
    {
        let file = try FileDescriptor.open(path, access: .writeOnly, options: [.create, .truncate])
        try file.write(bytes)
        try file.setModificationTime(modificationTime)
    }

    /// SplitMix64's finaliser over two words: independent seeds for folders and files.
    static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var z = a &+ 0x9E37_79B9_7F4A_7C15 &* (b &+ 1)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Runs `body` for each index on all cores; results in index order; the first error wins.
    static func parallelMap<T: Sendable>(_ range: Range<Int>, _ body: @Sendable (Int) throws -> T) throws -> [T] {
        let results = ResultSlots<T>(count: range.count)
        DispatchQueue.concurrentPerform(iterations: range.count) { offset in
            do { results.set(offset, .success(try body(range.lowerBound + offset))) } catch {
                results.set(offset, .failure(error))
            }
        }
        return try results.values()
    }
}

/// The bytes of a small file: even indices text (JSON or plain, compressible about 3:1),
/// odd indices random bytes. `version` makes an edited file differ from every earlier one.
enum SmallContent {
    static let words: [String] = [
        "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do",
        "eiusmod", "tempor", "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim",
        "ad", "minim", "veniam", "quis", "nostrud", "exercitation", "ullamco", "laboris", "nisi", "aliquip",
        "ex", "ea", "commodo", "consequat", "duis", "aute", "irure", "in", "reprehenderit", "voluptate",
        "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "excepteur", "sint", "occaecat", "cupidatat",
        "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt", "mollit", "anim", "id",
        "est", "laborum", "page", "note",
    ]

    /// Fills `bytes[0..<size]` and returns `size`.
    static func fill(_ bytes: inout [UInt8], size: Int, index: Int, version: Int, generator: inout SeededGenerator) -> Int {
        if bytes.count < size { bytes += [UInt8](repeating: 0, count: size - bytes.count) }
        if index % 2 == 1 {
            bytes.withUnsafeMutableBytes { generator.fill(UnsafeMutableRawBufferPointer(rebasing: $0[..<size])) }
            return size
        }
        let header = index % 4 == 0
            ? #"{"id":\#(index),"version":\#(version),"title":"page \#(index)","body":""#
            : "page \(index), version \(version)\n"
        var position = 0
        for byte in header.utf8 where position < size {
            bytes[position] = byte
            position += 1
        }
        while position < size {
            let word = words[Int(generator.next() % UInt64(words.count))]
            for byte in word.utf8 where position < size {
                bytes[position] = byte
                position += 1
            }
            if position < size {
                bytes[position] = 0x20
                position += 1
            }
        }
        if index % 4 == 0 && size >= 3 {
            bytes[size - 3] = 0x22  // "
            bytes[size - 2] = 0x7D  // }
            bytes[size - 1] = 0x0A
        }
        return size
    }
}

/// One result slot per index, filled from concurrent workers.
final class ResultSlots<T: Sendable>: Sendable {
    private let slots: Mutex<[Result<T, any Error>?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    func set(_ index: Int, _ value: Result<T, any Error>) { slots.withLock { $0[index] = value } }

    func values() throws -> [T] {
        try slots.withLock { $0 }.map { slot in try slot!.get() }
    }
}
