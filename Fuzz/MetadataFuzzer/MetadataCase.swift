import PackageCore

/// One fuzz input, cut into the pieces of a package's metadata.
///
/// The input is sections separated by `separator`: control bytes, the journal, the base
/// manifest (`index`), one delta, then the contents of up to four temporaries
/// (`.pkgtool/tmp/t0` … `t3`). A separator keeps the pieces apart under libFuzzer's
/// insertions and removals, where length fields would shift everything after them.
///
/// Before the pieces are written, the harness makes them *reachable*: the journal gets the
/// binding of this very package (the inodes of its root and of `.pkgtool/tmp`, which no
/// input can know) and every checksum is recomputed, so that mutations reach the operation
/// and record parsers, validation and apply, not only the first refusal. Control bits keep
/// some inputs as they are, so the refusals are fuzzed too.
struct MetadataCase {
    static let separator: [UInt8] = Array("#~#~".utf8)
    static let temporaryCount = 4

    var control: [UInt8]
    var journal: [UInt8]
    var index: [UInt8]
    var delta: [UInt8]
    var temporaries: [[UInt8]]

    init(_ input: UnsafeRawBufferPointer) {
        var sections: [[UInt8]] = []
        var start = 0
        var position = 0
        let separator = Self.separator
        while position + separator.count <= input.count && sections.count < 3 + Self.temporaryCount {
            if input[position] == separator[0] && input[position..<(position + separator.count)].elementsEqual(separator) {
                sections.append(Array(input[start..<position]))
                position += separator.count
                start = position
            } else {
                position += 1
            }
        }
        sections.append(Array(input[start...]))
        func section(_ number: Int) -> [UInt8] { number < sections.count ? sections[number] : [] }
        control = section(0) + [UInt8](repeating: 0, count: max(0, 4 - section(0).count))
        journal = section(1)
        index = section(2)
        delta = section(3)
        temporaries = (0..<Self.temporaryCount).map { section(4 + $0) }
    }

    /// The input these pieces come from (for the seeds).
    static func framed(control: [UInt8], journal: [UInt8], index: [UInt8], delta: [UInt8], temporaries: [[UInt8]]) -> [UInt8] {
        var bytes = control
        for piece in [journal, index, delta] + temporaries {
            bytes += separator + piece
        }
        return bytes
    }

    // MARK: Control bits

    var writesJournal: Bool { control[0] & 0x01 == 0 }
    var writesIndex: Bool { control[0] & 0x02 == 0 }
    var writesDelta: Bool { control[0] & 0x04 == 0 }
    /// Patch the journal's binding to this package (most inputs).
    var bindsJournal: Bool { control[0] & 0x08 == 0 }
    /// Recompute the checksums of journal, index and delta (most inputs).
    var fixesChecksums: Bool { control[0] & 0x10 == 0 }
    /// Make the delta name the index as its base (most inputs).
    var chainsDelta: Bool { control[0] & 0x20 == 0 }
    var durability: Durability { control[0] & 0x40 == 0 ? .full : .none }
    /// After recovery and reading, save the source tree into the package.
    var saves: Bool { control[0] & 0x80 != 0 }

    var strategy: SaveStrategy {
        switch control[1] & 0x03 {
        case 1: return .atomic
        case 2: return .full
        default: return .journaled
        }
    }
    var trustsManifest: Bool { control[1] & 0x04 == 0 }

    /// Where pkgtool's metadata really is.
    enum Layout: UInt8 {
        /// `.pkgtool` with `tmp/`, the journal and the manifest files in it.
        case normal
        /// `.pkgtool/tmp` is a symbolic link to a folder outside the package holding the temporaries.
        case temporariesOutside
        /// `.pkgtool` itself is a symbolic link to a folder outside holding all of it.
        case metadataOutside
        /// `.pkgtool/journal` is a symbolic link to a journal outside.
        case journalOutside
    }
    var layout: Layout { Layout(rawValue: (control[1] >> 3) & 0x03)! }
    /// Read the package (recovering when the reader sees fit) before recovering explicitly.
    var readsFirst: Bool { control[1] & 0x20 != 0 }
    /// The journal's binding names `.pkgtool/tmp` as missing (inode 0).
    var bindsWithoutTemporaries: Bool { control[1] & 0x40 != 0 }
    /// The base manifest is a FIFO instead of a file.
    var indexIsFIFO: Bool { control[1] & 0x80 != 0 }

    /// What each temporary is.
    enum TemporaryKind: UInt8 {
        case file, symbolicLink, directory, fifo
    }
    /// The delta's name without pkgtool's leading zeros (`delta.1`), which loading accepts.
    var looseDeltaName: Bool { control[3] & 0x01 != 0 }

    func temporaryKind(_ number: Int) -> TemporaryKind { TemporaryKind(rawValue: (control[2] >> (2 * number)) & 0x03)! }

    // MARK: Making the pieces reachable

    /// The journal's binding: root inode at byte 16, `.pkgtool/tmp`'s at 24 (SaveJournal,
    /// version 2).
    static let journalBindingOffset = 16
    /// A delta's sequence number at byte 16 and the checksum of its base at 24
    /// (Specs/manifest.md).
    static let deltaSequenceOffset = 16
    static let deltaBaseChecksumOffset = 24
    static let checksumSize = 16

    /// The journal to write, for a package whose root and temporaries directory have
    /// these inodes.
    func journalBytes(root: UInt64, temporaries: UInt64) -> [UInt8] {
        var bytes = journal
        if bindsJournal && bytes.count >= Self.journalBindingOffset + 16 + Self.checksumSize {
            Self.patch(&bytes, at: Self.journalBindingOffset, root)
            Self.patch(&bytes, at: Self.journalBindingOffset + 8, bindsWithoutTemporaries ? 0 : temporaries)
        }
        if fixesChecksums { Self.fixChecksum(&bytes) }
        return bytes
    }

    /// The index to write.
    func indexBytes() -> [UInt8] {
        var bytes = index
        if fixesChecksums { Self.fixChecksum(&bytes) }
        return bytes
    }

    /// The delta to write, and its file name (`delta.00000N`, N its own sequence number
    /// when that is plausible, so that mutating one keeps the other).
    func deltaFile(indexBytes: [UInt8]) -> (name: String, bytes: [UInt8]) {
        var bytes = delta
        var sequence: UInt64 = 1
        if bytes.count >= Self.deltaBaseChecksumOffset + Self.checksumSize + Self.checksumSize {
            let stored = bytes[Self.deltaSequenceOffset..<(Self.deltaSequenceOffset + 8)].reversed().reduce(UInt64(0)) {
                $0 << 8 | UInt64($1)
            }
            if (1...9).contains(stored) { sequence = stored }
            if chainsDelta && indexBytes.count >= Self.checksumSize {
                bytes.replaceSubrange(
                    Self.deltaBaseChecksumOffset..<(Self.deltaBaseChecksumOffset + Self.checksumSize),
                    with: indexBytes.suffix(Self.checksumSize))
            }
        }
        if fixesChecksums { Self.fixChecksum(&bytes) }
        let name = looseDeltaName ? PackageLayout.deltaFilePrefix + String(sequence) : PackageManifest.deltaFileName(sequence)
        return (name, bytes)
    }

    static func patch(_ bytes: inout [UInt8], at offset: Int, _ value: UInt64) {
        for byte in 0..<8 { bytes[offset + byte] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(byte))) }
    }

    /// The trailing XXH3-128 of pkgtool's metadata files: of every byte before it.
    static func fixChecksum(_ bytes: inout [UInt8]) {
        guard bytes.count >= checksumSize else { return }
        let body = bytes.count - checksumSize
        let checksum = bytes.withUnsafeBytes { ContentHash.of(UnsafeRawBufferPointer(rebasing: $0[..<body])) }
        bytes.replaceSubrange(body..., with: checksum.canonicalBytes)
    }
}
