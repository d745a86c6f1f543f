import PackageCore

/// What the structural pass over an archive found.
struct ParsedArchive {
    var entries: [ZipEntry]
    var tree: PathTree
    var comment: String
    var centralDirectoryOffset: Int64
    var isZip64: Bool
    /// The bytes below the central directory that earlier in-place appends left dead
    /// (`DeadRanges`), as the first central record declares them.
    var deadRanges: [Range<Int64>]
}

/// The structural checks of `ZipArchive.open`: end records, central directory, local
/// headers, data descriptors, names, overlaps and limits. Every read is bounds-checked
/// against the file's size before it is made; every count is checked before memory is
/// reserved for it.
struct ArchiveParser {
    let path: String
    let size: Int64
    let limits: ZipLimits

    init(path: String, size: Int64, limits: ZipLimits) {
        self.path = path
        self.size = size
        self.limits = limits
    }

    func fail(_ kind: ZipError.Kind, _ entry: String? = nil, _ reason: String) -> ZipError {
        ZipError(kind, archive: path, entry: entry, reason)
    }

    /// Reads `count` bytes at `offset`, refusing a read past the end of the file.
    func read(_ file: borrowing FileDescriptor, at offset: Int64, count: Int, what: String, entry: String? = nil)
        throws -> [UInt8]
    {
        guard offset >= 0, count >= 0, offset <= size, Int64(count) <= size - offset else {
            throw fail(.truncated, entry, "the \(what) runs past the end of the file")
        }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try file.readFully(into: $0, at: offset) }
        guard got == count else { throw fail(.truncated, entry, "the file ended while reading the \(what)") }
        return bytes
    }

    // MARK: End records

    struct EndRecord {
        var position: Int64
        var disk: UInt32
        var centralDisk: UInt32
        var entriesOnDisk: UInt64
        var totalEntries: UInt64
        var centralSize: UInt64
        var centralOffset: UInt64
        var comment: [UInt8]
        var zip64RecordOffset: Int64?
    }

    mutating func parse(_ file: borrowing FileDescriptor) throws -> ParsedArchive {
        let end = try findEnd(file)
        let centralEnd = end.zip64RecordOffset ?? end.position
        guard end.disk == 0, end.centralDisk == 0, end.entriesOnDisk == end.totalEntries else {
            throw fail(.unsupported, nil, "split (multi-disk) archives are not supported")
        }
        guard end.centralOffset <= UInt64(size), end.centralSize <= UInt64(size) else {
            throw fail(.inconsistent, nil, "the central directory's offset or size points past the end of the file")
        }
        let centralOffset = Int64(end.centralOffset)
        let centralSize = Int64(end.centralSize)
        guard centralOffset + centralSize == centralEnd else {
            let shift = centralEnd - centralOffset - centralSize
            if shift > 0, shift <= centralOffset + shift,
                let moved = try? read(file, at: centralOffset + shift, count: 4, what: "central directory"),
                moved.withUnsafeBytes({ $0.le32(0) }) == ZipFormat.centralHeaderSignature
            {
                if startsWithLocalHeader(file) {
                    throw fail(
                        .inconsistent, nil,
                        "the end record says the central directory starts at offset \(centralOffset), but it starts at \(centralOffset + shift) (a wrong offset: the file starts with a local header, not with other data)")
                }
                throw fail(
                    .junk, nil,
                    "\(shift) bytes of other data precede the archive (self-extractors and prefixed archives are not accepted)")
            }
            if centralOffset + centralSize < centralEnd {
                throw fail(
                    .inconsistent, nil,
                    "\(centralEnd - centralOffset - centralSize) bytes lie between the central directory and the end record")
            }
            throw fail(.inconsistent, nil, "the central directory overlaps the end record (its offset or size is wrong)")
        }
        guard end.totalEntries <= UInt64(limits.maximumEntries) else {
            throw fail(.limit, nil, "\(end.totalEntries) entries, over the limit of \(limits.maximumEntries)")
        }
        guard end.totalEntries * UInt64(ZipFormat.centralHeaderSize) <= end.centralSize else {
            throw fail(
                .inconsistent, nil,
                "the end record declares \(end.totalEntries) entries, more than a central directory of \(centralSize) bytes holds")
        }
        let central = try read(file, at: centralOffset, count: Int(centralSize), what: "central directory")
        var entries = try central.withUnsafeBytes {
            try parseCentral($0, declared: Int(end.totalEntries), wrappedCount: end.zip64RecordOffset == nil)
        }
        guard entries.count <= limits.maximumEntries else {
            throw fail(.limit, nil, "\(entries.count) entries, over the limit of \(limits.maximumEntries)")
        }
        let dead = try central.withUnsafeBytes { try declaredDeadRanges($0) }
        try checkLocalHeaders(file, &entries, centralOffset: centralOffset, dead: dead)
        if entries.contains(where: { $0.relativePath.isRoot }) {
            entries.removeAll { $0.relativePath.isRoot }
            for index in entries.indices { entries[index].index = index }
        }
        let tree = try checkPaths(entries)
        try checkTotals(entries)
        return ParsedArchive(
            entries: entries, tree: tree, comment: String(decoding: end.comment, as: UTF8.self),
            centralDirectoryOffset: centralOffset, isZip64: end.zip64RecordOffset != nil, deadRanges: dead)
    }

    /// The dead ranges the first central record declares (none when it has no such field).
    /// Called once the records parsed: the first one is whole.
    func declaredDeadRanges(_ central: UnsafeRawBufferPointer) throws -> [Range<Int64>] {
        guard central.count >= ZipFormat.centralHeaderSize else { return [] }
        let nameLength = Int(central.le16(28))
        let extraLength = Int(central.le16(30))
        let start = ZipFormat.centralHeaderSize + nameLength
        let extra = UnsafeRawBufferPointer(rebasing: central[start..<(start + extraLength)])
        guard let item = ExtraField.records(extra)?.first(where: { $0.id == ZipFormat.deadRangesID }) else { return [] }
        guard let ranges = DeadRanges.parse(UnsafeRawBufferPointer(rebasing: extra[item.dataOffset..<(item.dataOffset + item.length)]))
        else {
            throw fail(
                .malformed, nil,
                "the dead-range field (0x6470) of the first central record is malformed (ranges out of order, touching, empty or cut short)")
        }
        return ranges
    }

    /// Finds the end record: the one whose comment reaches exactly the end of the file, or
    /// is followed only by zero bytes, fewer than `ZipFormat.maximumZeroPadding` (the block
    /// padding bsdtar adds when it writes to a pipe; zeros can hide no record).
    /// When several do (an archive hidden in the comment of another), the earliest is the
    /// real one: the others lie inside its comment.
    func findEnd(_ file: borrowing FileDescriptor) throws -> EndRecord {
        guard size >= Int64(ZipFormat.endRecordSize) else {
            throw fail(.notAnArchive, nil, "not a ZIP archive (\(size) bytes, too short for an end record)")
        }
        let tailLength = Int(min(size, Int64(ZipFormat.maximumEndSearch + ZipFormat.zip64LocatorSize)))
        let tailStart = size - Int64(tailLength)
        let tail = try read(file, at: tailStart, count: tailLength, what: "end of the archive")
        let (position, recordEnd) = try locateEnd(in: tail)
        try refuseHiddenRecords(in: Array(tail[..<recordEnd]), commentStart: position + ZipFormat.endRecordSize)
        var record = tail.withUnsafeBytes { bytes in
            EndRecord(
                position: tailStart + Int64(position), disk: UInt32(bytes.le16(position + 4)),
                centralDisk: UInt32(bytes.le16(position + 6)), entriesOnDisk: UInt64(bytes.le16(position + 8)),
                totalEntries: UInt64(bytes.le16(position + 10)), centralSize: UInt64(bytes.le32(position + 12)),
                centralOffset: UInt64(bytes.le32(position + 16)),
                comment: Array(bytes[(position + ZipFormat.endRecordSize)..<recordEnd]), zip64RecordOffset: nil)
        }
        try readZip64EndIfAny(file, tail: tail, endRecordAt: position, record: &record)
        return record
    }

    /// The earliest end-record signature in `tail` (the file's last bytes) whose comment
    /// reaches the end exactly or the zero padding there: its position and where its
    /// comment ends. A signature that fits no way is junk after the archive; none at all,
    /// no archive.
    private func locateEnd(in tail: [UInt8]) throws -> (position: Int, recordEnd: Int) {
        let tailLength = tail.count
        var found: Int?
        var sawSignature = false
        var recordEnd = tailLength
        tail.withUnsafeBytes { bytes in
            // Where the zero bytes at the very end begin: bsdtar writing to a pipe pads its
            // archive with NULs to its 10 KiB block, which other readers take as it is.
            var zerosFrom = tailLength
            while zerosFrom > 0 && bytes[zerosFrom - 1] == 0 { zerosFrom -= 1 }
            var position = tailLength - ZipFormat.endRecordSize
            while position >= 0 {
                if bytes[position] == 0x50, bytes.le32(position) == ZipFormat.endSignature {
                    sawSignature = true
                    let end = position + ZipFormat.endRecordSize + Int(bytes.le16(position + 20))
                    if end == tailLength || (end >= zerosFrom && end < tailLength && tailLength - end < ZipFormat.maximumZeroPadding) {
                        found = position
                        recordEnd = end
                    }
                }
                position -= 1
            }
        }
        guard let position = found else {
            if sawSignature {
                throw fail(
                    .junk, nil,
                    "no end record whose comment reaches the end of the file (trailing data after the archive, or a wrong comment length)")
            }
            throw fail(.notAnArchive, nil, "not a ZIP archive (no end-of-central-directory record)")
        }
        return (position, recordEnd)
    }

    /// Reads the ZIP64 end record when its locator sits right before the end record
    /// (at `endRecordAt` in `tail`). Without one, fields holding ZIP64 markers are refused,
    /// except exactly 65,535 entries, which is legal without ZIP64.
    private func readZip64EndIfAny(
        _ file: borrowing FileDescriptor, tail: [UInt8], endRecordAt position: Int, record: inout EndRecord
    ) throws {
        let locatorPosition = position - ZipFormat.zip64LocatorSize
        let hasLocator =
            locatorPosition >= 0
            && tail.withUnsafeBytes { $0.le32(locatorPosition) == ZipFormat.zip64LocatorSignature }
        let needsZip64 =
            record.disk == 0xFFFF || record.centralDisk == 0xFFFF || record.entriesOnDisk == 0xFFFF
            || record.totalEntries == 0xFFFF || record.centralSize == 0xFFFF_FFFF || record.centralOffset == 0xFFFF_FFFF
        if hasLocator {
            try readZip64End(file, locator: tail, at: locatorPosition, record: &record)
        } else if needsZip64
            && (record.totalEntries == 0xFFFF && record.centralSize != 0xFFFF_FFFF && record.centralOffset != 0xFFFF_FFFF)
        {
            // Exactly 65,535 entries without ZIP64 is legal: the count is real.
        } else if needsZip64 {
            throw fail(.inconsistent, nil, "the end record's fields are ZIP64 markers, but there is no ZIP64 locator")
        }
    }

    /// Refuses an archive whose comment holds another end record (classic or ZIP64) or a
    /// central directory header: an archive hidden in the comment. Readers that take the
    /// last end-record signature in the file (python's zipfile, unzip, bsdtar) would read
    /// that one; we would read the outer one: the archive reads two ways.
    func refuseHiddenRecords(in tail: [UInt8], commentStart: Int) throws {
        let hidden: [(UInt32, String)] = [
            (ZipFormat.endSignature, "an end-of-central-directory record"),
            (ZipFormat.centralHeaderSignature, "a central directory header"),
            (ZipFormat.zip64EndSignature, "a ZIP64 end record"),
            (ZipFormat.zip64LocatorSignature, "a ZIP64 end locator"),
        ]
        try tail.withUnsafeBytes { bytes in
            var position = commentStart
            while position + 4 <= bytes.count {
                if bytes[position] == 0x50, bytes[position + 1] == 0x4B,
                    let (_, what) = hidden.first(where: { $0.0 == bytes.le32(position) })
                {
                    throw fail(
                        .ambiguous, nil,
                        "the archive comment holds \(what) (an archive hidden in the comment, which other tools would read instead)")
                }
                position += 1
            }
        }
    }

    func readZip64End(_ file: borrowing FileDescriptor, locator tail: [UInt8], at position: Int, record: inout EndRecord)
        throws
    {
        let (locatorDisk, recordOffset, diskCount) = tail.withUnsafeBytes { bytes in
            (bytes.le32(position + 4), bytes.le64(position + 8), bytes.le32(position + 16))
        }
        guard locatorDisk == 0, diskCount <= 1 else {
            throw fail(.unsupported, nil, "split (multi-disk) archives are not supported")
        }
        let locatorOffset = record.position - Int64(ZipFormat.zip64LocatorSize)
        guard recordOffset <= UInt64(locatorOffset), UInt64(locatorOffset) - recordOffset >= UInt64(ZipFormat.zip64EndRecordSize)
        else { throw fail(.inconsistent, nil, "the ZIP64 locator points to an impossible end-record offset") }
        let offset = Int64(recordOffset)
        let bytes = try read(file, at: offset, count: ZipFormat.zip64EndRecordSize, what: "ZIP64 end record")
        try bytes.withUnsafeBytes { raw in
            guard raw.le32(0) == ZipFormat.zip64EndSignature else {
                throw fail(.malformed, nil, "the ZIP64 end record has a bad signature")
            }
            let recordSize = raw.le64(4)
            guard recordSize >= 44, recordSize <= UInt64(locatorOffset - offset), offset + 12 + Int64(recordSize) == locatorOffset
            else {
                throw fail(.inconsistent, nil, "the ZIP64 end record's size does not reach the locator")
            }
            let disk = raw.le32(16)
            let centralDisk = raw.le32(20)
            let onDisk = raw.le64(24)
            let total = raw.le64(32)
            let centralSize = raw.le64(40)
            let centralOffset = raw.le64(48)
            func agree(_ short: UInt64, _ marker: UInt64, _ long: UInt64, _ what: String) throws {
                if short != marker && short != long {
                    throw fail(.inconsistent, nil, "the end record and the ZIP64 end record disagree on the \(what)")
                }
            }
            try agree(UInt64(record.disk), 0xFFFF, UInt64(disk), "disk number")
            try agree(UInt64(record.centralDisk), 0xFFFF, UInt64(centralDisk), "central directory's disk")
            try agree(record.entriesOnDisk, 0xFFFF, onDisk, "entry count on this disk")
            try agree(record.totalEntries, 0xFFFF, total, "entry count")
            try agree(record.centralSize, 0xFFFF_FFFF, centralSize, "central directory's size")
            try agree(record.centralOffset, 0xFFFF_FFFF, centralOffset, "central directory's offset")
            record.disk = disk
            record.centralDisk = centralDisk
            record.entriesOnDisk = onDisk
            record.totalEntries = total
            record.centralSize = centralSize
            record.centralOffset = centralOffset
            record.zip64RecordOffset = offset
        }
    }

    // MARK: Central directory

    /// Parses the central directory's records. Without ZIP64 end records, more than 65,535
    /// entries are accepted when the 16-bit count is the true count modulo 65,536 (old
    /// writers wrap it; libzip and Info-ZIP read such archives).
    func parseCentral(_ bytes: UnsafeRawBufferPointer, declared: Int, wrappedCount: Bool) throws -> [ZipEntry] {
        var entries: [ZipEntry] = []
        entries.reserveCapacity(declared)
        var offset = 0
        while offset < bytes.count {
            guard entries.count < declared || wrappedCount else {
                throw fail(
                    .inconsistent, nil,
                    "the central directory holds more entries than the \(declared) the end record declares")
            }
            guard bytes.count - offset >= ZipFormat.centralHeaderSize else {
                throw fail(.truncated, nil, "central directory record \(entries.count + 1) is cut short")
            }
            guard bytes.le32(offset) == ZipFormat.centralHeaderSignature else {
                throw fail(.malformed, nil, "central directory record \(entries.count + 1) has a bad signature")
            }
            let nameLength = Int(bytes.le16(offset + 28))
            let extraLength = Int(bytes.le16(offset + 30))
            let commentLength = Int(bytes.le16(offset + 32))
            let recordLength = ZipFormat.centralHeaderSize + nameLength + extraLength + commentLength
            guard bytes.count - offset >= recordLength else {
                throw fail(.truncated, nil, "central directory record \(entries.count + 1) runs past the directory's end")
            }
            let record = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + recordLength)])
            entries.append(try parseCentralRecord(record, index: entries.count))
            offset += recordLength
        }
        guard entries.count == declared || (wrappedCount && entries.count > 0xFFFF && entries.count % 0x10000 == declared)
        else {
            throw fail(
                .inconsistent, nil,
                "the end record declares \(declared) entries, the central directory holds \(entries.count)")
        }
        return entries
    }

    func parseCentralRecord(_ record: UnsafeRawBufferPointer, index: Int) throws -> ZipEntry {
        guard var header = CentralHeader(parsing: record) else {
            throw fail(.truncated, nil, "central directory record \(index + 1) runs past the directory's end")
        }
        // The name first, so that every later message can say which entry.
        let host = header.host
        let storedName = ZipNames.decode(header.name, utf8Flag: header.flags & ZipFormat.flagUTF8 != 0)
        let shownName = storedName ?? String(decoding: header.name, as: UTF8.self)
        let extras = try parseCentralExtras(&header, index: index, shownName: shownName)
        guard let decodedName = extras.unicodeName ?? storedName else {
            throw fail(.malformed, shownName, "the name is marked UTF-8 (bit 11) but is not valid UTF-8")
        }
        let checked = try checkedCentralName(decodedName, shownName: shownName, host: host)
        let name = checked.name
        let storedNameBytes: [UInt8]? = extras.unicodeName == nil ? nil : Array(header.name)
        if storedNameBytes != nil {
            try checkStoredNameBesideUnicodePath(
                storedName ?? String(decoding: header.name, as: UTF8.self), name: name, host: host)
        }
        let method = try checkCentralSupport(header, name: name)
        let (kind, permissions) = try centralKind(header, checked, shownName: shownName)
        let seconds = extras.modificationSeconds ?? DOSTime.decode(time: header.dosTime, date: header.dosDate)
        return ZipEntry(
            relativePath: checked.path, kind: kind, permissions: permissions, modificationTime: seconds * 1_000_000_000, method: method,
            crc32: header.crc32, compressedSize: Int64(header.compressedSize),
            uncompressedSize: Int64(header.uncompressedSize),
            contentHash: kind == .directory ? nil : extras.contentHash, linkTarget: nil,
            localHeaderOffset: Int64(header.localHeaderOffset),
            dataOffset: 0, hasDataDescriptor: header.flags & ZipFormat.flagDataDescriptor != 0, index: index, endOffset: 0,
            dosTime: header.dosTime, dosDate: header.dosDate, flags: header.flags,
            extendedModificationTime: extras.modificationSeconds,
            pairedExtras: extras.seen.intersection(ZipFormat.pairedExtraIDs), storedNameBytes: storedNameBytes,
            usesBackslashSeparators: !PathOrder.sameBytes(ZipNames.separatorsFixed(shownName, host: host), shownName))
    }

    /// Reads the central extra field: ZIP64 values replace the marked ones in `header`.
    func parseCentralExtras(_ header: inout CentralHeader, index: Int, shownName: String) throws -> CentralExtras {
        var extras = CentralExtras()
        let nameBytes = header.name
        let comment = header.comment
        let seen = try walkExtraField(header.extra, place: "central", entry: shownName) { id, data in
            switch id {
            case ZipFormat.zip64ExtraID:
                try applyCentralZip64(data, to: &header, shownName: shownName)
            case ZipFormat.extendedTimestampID:
                extras.modificationSeconds = ExtendedTimestampField(parsing: data).modificationSeconds
            case ZipFormat.unicodePathID:
                // Info-ZIP's Unicode path: version 1, CRC-32 of the header's name, UTF-8 name.
                guard data.count > 5, data[0] == 1, data.le32(1) == CRC32.update(0, nameBytes),
                    let unicode = String(validating: data[5...], as: UTF8.self)
                else { throw fail(.inconsistent, shownName, "the Unicode path field (0x7075) does not match the name") }
                extras.unicodeName = unicode
            case ZipFormat.unicodeCommentID:
                guard data.count >= 5, data[0] == 1, data.le32(1) == CRC32.update(0, comment) else {
                    throw fail(.inconsistent, shownName, "the Unicode comment field (0x6375) does not match the comment")
                }
            case ZipFormat.contentHashID:
                extras.contentHash = try parseContentHash(data, entry: shownName)
            case ZipFormat.deadRangesID where index != 0:
                throw fail(
                    .malformed, shownName,
                    "a dead-range field (0x6470) outside the first central record (only there does it describe the archive)")
            default: break
            }
        }
        extras.seen = seen
        return extras
    }

    /// The central ZIP64 field holds, in this order, only the values marked in the header.
    func applyCentralZip64(_ data: UnsafeRawBufferPointer, to header: inout CentralHeader, shownName: String) throws {
        var cursor = 0
        func next(_ width: Int) throws -> UInt64 {
            guard cursor + width <= data.count else {
                throw fail(.malformed, shownName, "the ZIP64 extra field is too short for the values it must hold")
            }
            defer { cursor += width }
            return width == 8 ? data.le64(cursor) : UInt64(data.le32(cursor))
        }
        if header.uncompressedSize == 0xFFFF_FFFF { header.uncompressedSize = try next(8) }
        if header.compressedSize == 0xFFFF_FFFF { header.compressedSize = try next(8) }
        if header.localHeaderOffset == 0xFFFF_FFFF { header.localHeaderOffset = try next(8) }
        if header.disk == 0xFFFF { header.disk = UInt32(try next(4)) }
    }

    /// An entry's name once checked.
    struct CheckedName {
        /// The name for messages: as stored, normalised ("./" for the root entry).
        var name: String
        /// The entry's path (the root for the root entry).
        var path: RelativePath
        /// Whether the name ends in "/", a directory's (the root entry's "./" does).
        var hasTrailingSlash: Bool
        /// Whether this is the root entry ("./", as bsdtar writes it).
        var isRoot: Bool
    }

    /// Normalises and checks an entry's name, and makes it a `RelativePath`
    /// (`ZipNames.path(of:maximumLength:)`: `RelativePath`'s rules and ZIP's own).
    func checkedCentralName(_ decoded: String, shownName: String, host: UInt16) throws -> CheckedName {
        // tar-style names ("./a", and "./" for the root, as bsdtar writes them) mean the same
        // as without the prefix; the root entry itself is checked like any other, then dropped.
        let name = ZipNames.droppingDotSlashes(ZipNames.separatorsFixed(decoded, host: host))
        if name.isEmpty && !shownName.isEmpty {
            return CheckedName(name: "./", path: .root, hasTrailingSlash: true, isRoot: true)
        }
        let checked: (path: RelativePath, isDirectory: Bool)
        switch ZipNames.path(of: name, maximumLength: limits.maximumNameLength) {
        case .success(let path): checked = path
        case .failure(let refusal): throw fail(refusal.isLimit ? .limit : .unsafeName, name, refusal.reason)
        }
        if ZipNames.isReservedTopLevel(checked.path) {
            throw fail(
                .reservedName, name,
                "'\(PackageLayout.metadataDirectoryName)' at the top holds pkgtool's own state, which is never taken from an archive (remove it: zip -d ARCHIVE '\(PackageLayout.metadataDirectoryName)/*')")
        }
        return CheckedName(name: name, path: checked.path, hasTrailingSlash: checked.isDirectory, isRoot: false)
    }

    /// A Unicode path field gives the entry its name, but readers that ignore the field
    /// (python's zipfile, streaming readers) use the stored one: it must be as safe.
    func checkStoredNameBesideUnicodePath(_ storedName: String, name: String, host: UInt16) throws {
        let stored = ZipNames.droppingDotSlashes(ZipNames.separatorsFixed(storedName, host: host))
        var problem: String?
        if !stored.isEmpty {
            switch ZipNames.path(of: stored, maximumLength: limits.maximumNameLength) {
            case .success(let checked):
                if ZipNames.isReservedTopLevel(checked.path) {
                    problem = "is pkgtool's reserved '\(PackageLayout.metadataDirectoryName)'"
                }
            case .failure(let refusal): problem = refusal.reason
            }
        }
        if let problem {
            throw fail(
                .unsafeName, name,
                "the name stored beside its Unicode path field (0x7075), '\(ZipError.printable(stored))', is refused (\(problem)): readers that ignore the field would use it")
        }
    }

    /// Refuses what the profile does not read (split archives, encryption, other methods)
    /// and sizes or offsets the file cannot hold; returns the method.
    func checkCentralSupport(_ header: CentralHeader, name: String) throws -> ZipMethod {
        guard header.disk == 0 else { throw fail(.unsupported, name, "split (multi-disk) archives are not supported") }
        if header.flags & (ZipFormat.flagEncrypted | ZipFormat.flagStrongEncryption) != 0 || header.method == 99 {
            throw fail(.encrypted, name, "the entry is encrypted; encrypted archives are not supported")
        }
        if header.flags & ZipFormat.flagMaskedHeaders != 0 {
            throw fail(.encrypted, name, "the central directory is encrypted (masked headers); not supported")
        }
        let method = ZipMethod(rawValue: header.method)
        if case .other = method {
            throw fail(.unsupportedMethod, name, "compression method \(method) is not supported (only stored and deflated)")
        }
        guard header.compressedSize <= UInt64(size), header.localHeaderOffset < UInt64(size) else {
            throw fail(.inconsistent, name, "the entry's offset or compressed size points past the end of the file")
        }
        guard header.uncompressedSize <= UInt64(Int64.max) else {
            throw fail(.limit, name, "the declared size is impossibly large")
        }
        if method == .stored && header.compressedSize != header.uncompressedSize {
            throw fail(
                .inconsistent, name,
                "a stored entry with different sizes (\(header.compressedSize) stored, \(header.uncompressedSize) declared)")
        }
        return method
    }

    /// Kind and mode: the Unix mode when the archive was made on Unix (3) or macOS (19)
    /// and its upper 16 bits are not all zero (Info-ZIP's test too); otherwise there is
    /// no mode, and files get 0644, directories 0755. A stored mode is restored as it
    /// is, 0000 included, without set-id and sticky bits.
    func centralKind(_ header: CentralHeader, _ checked: CheckedName, shownName: String) throws -> (FileKind, UInt32) {
        let name = checked.name
        let isRoot = checked.isRoot
        let host = header.host
        let external = header.externalAttributes
        let unixMode = (host == 3 || host == 19) ? external >> 16 : 0
        let hasUnixMode = unixMode != 0
        var kind: FileKind = .regular
        if checked.hasTrailingSlash {
            kind = .directory
        } else if hasUnixMode {
            switch unixMode & 0o170000 {
            case 0o120000: kind = .symbolicLink
            case 0o040000: kind = .directory
            default:
                // Regular files, and the odd FIFO mode Info-ZIP records for data read from a pipe
                // (`zip - -`): the data is extracted as a regular file; no device is ever created.
                kind = .regular
            }
        } else if external & 0x10 != 0 && (host == 0 || host == 10 || host == 11 || host == 14) {
            kind = .directory
        }
        if kind == .directory && !checked.hasTrailingSlash && !isRoot {
            throw fail(
                .inconsistent, name,
                "a directory entry (by its \(hasUnixMode ? "Unix mode" : "MS-DOS attribute")) whose name lacks the trailing '/' (other tools would extract it as a file)")
        }
        let permissions: UInt32 = hasUnixMode ? unixMode & 0o777 : (kind == .directory ? 0o755 : 0o644)
        if isRoot && kind != .directory { throw fail(.unsafeName, shownName, "the name '.' is not a directory") }
        if kind == .directory && header.uncompressedSize != 0 {
            throw fail(.inconsistent, name, "a directory entry with \(header.uncompressedSize) bytes of data")
        }
        return (kind, permissions)
    }

    func parseContentHash(_ data: UnsafeRawBufferPointer, entry: String) throws -> ContentHash {
        guard let field = ContentHashField(parsing: data), let hash = field.hash else {
            throw fail(.malformed, entry, "pkgtool's content-hash field (0x6870) is malformed")
        }
        return hash
    }

    // MARK: Local headers

    /// Reads every local header in file order, checks it against the central record, finds
    /// where the data and any data descriptor end, and refuses overlaps and junk.
    ///
    /// A gap is accepted only when it is the next of the `dead` ranges (`DeadRanges`), and
    /// every declared range must be such a gap.
    func checkLocalHeaders(
        _ file: borrowing FileDescriptor, _ entries: inout [ZipEntry], centralOffset: Int64, dead: [Range<Int64>]
    ) throws {
        let order = entries.indices.sorted { entries[$0].localHeaderOffset < entries[$1].localHeaderOffset }
        let window = ReadWindow(size: size)
        var previousEnd: Int64 = 0
        var previousName: String?
        var declared = dead[...]
        for index in order {
            var entry = entries[index]
            let name = entry.name
            try checkGap(
                before: entry, previousEnd: previousEnd, previousName: previousName, declared: &declared, file,
                window: window, centralOffset: centralOffset)
            try checkLocalHeader(file, &entry, window: window, centralOffset: centralOffset)
            previousEnd = entry.endOffset
            previousName = name
            entries[index] = entry
        }
        if let previousName {
            guard previousEnd <= centralOffset else {
                throw fail(.overlap, previousName, "its data runs into the central directory")
            }
            guard previousEnd == centralOffset || Self.takeDeclared(previousEnd..<centralOffset, from: &declared) else {
                throw fail(
                    .inconsistent, nil,
                    "\(centralOffset - previousEnd) bytes of unexplained data lie between the last entry and the central directory")
            }
        } else if centralOffset != 0 {
            throw fail(.junk, nil, "\(centralOffset) bytes of other data precede the (empty) central directory")
        }
        guard declared.isEmpty else {
            throw fail(
                .inconsistent, nil,
                "the dead-range field (0x6470) declares \(declared.count) range(s) that are not gaps between the entries (the first at offset \(declared.first!.lowerBound))")
        }
    }

    /// Refuses what lies before an entry's local header: an offset into the central
    /// directory, an overlap with the previous entry, or a gap (or prefix) that is not the
    /// next declared dead range.
    func checkGap(
        before entry: ZipEntry, previousEnd: Int64, previousName: String?, declared: inout ArraySlice<Range<Int64>>,
        _ file: borrowing FileDescriptor, window: ReadWindow, centralOffset: Int64
    ) throws {
        let name = entry.name
        if entry.localHeaderOffset >= centralOffset {
            throw fail(
                .inconsistent, name,
                "its local header offset (\(entry.localHeaderOffset)) points past the entries' data, where the central directory starts (\(centralOffset))")
        }
        if let previousName, entry.localHeaderOffset < previousEnd {
            throw fail(
                .overlap, name,
                "its data overlaps entry '\(ZipError.printable(previousName))' (a zip bomb or a corrupt directory)")
        }
        if previousName != nil, entry.localHeaderOffset > previousEnd,
            !Self.takeDeclared(previousEnd..<entry.localHeaderOffset, from: &declared)
        {
            if isLocalHeader(file, at: previousEnd, window: window) {
                throw fail(
                    .inconsistent, name,
                    "its local header offset (\(entry.localHeaderOffset)) is past a local header at \(previousEnd) that no central record names (a wrong offset, or an entry missing from the central directory)")
            }
            throw fail(
                .inconsistent, name,
                "\(entry.localHeaderOffset - previousEnd) bytes of unexplained data lie before its local header")
        }
        if previousName == nil && entry.localHeaderOffset != 0 && !Self.takeDeclared(0..<entry.localHeaderOffset, from: &declared) {
            if isLocalHeader(file, at: 0, window: window) {
                throw fail(
                    .inconsistent, name,
                    "its local header offset (\(entry.localHeaderOffset)) is wrong: the file starts with a local header that no central record names (not other data before the archive)")
            }
            throw fail(
                .junk, nil,
                "\(entry.localHeaderOffset) bytes of other data precede the first entry (self-extractors and prefixed archives are not accepted)")
        }
    }

    /// Whether `gap` is the next declared dead range; if so it is taken off `declared`.
    static func takeDeclared(_ gap: Range<Int64>, from declared: inout ArraySlice<Range<Int64>>) -> Bool {
        guard let next = declared.first, next == gap else { return false }
        declared.removeFirst()
        return true
    }

    /// Whether a local header signature is at `offset` (for messages about wrong offsets).
    func isLocalHeader(_ file: borrowing FileDescriptor, at offset: Int64, window: ReadWindow) -> Bool {
        guard let bytes = try? window.bytes(file, at: offset, count: 4, parser: self, what: "local header", entry: "")
        else { return false }
        return bytes.le32(0) == ZipFormat.localHeaderSignature
    }

    /// Whether the file starts with a local header: then it has no prefix (a self-extractor's
    /// code would come first), and a shifted offset is a wrong one.
    func startsWithLocalHeader(_ file: borrowing FileDescriptor) -> Bool {
        guard let bytes = try? read(file, at: 0, count: 4, what: "first local header") else { return false }
        return bytes.withUnsafeBytes { $0.le32(0) } == ZipFormat.localHeaderSignature
    }

    func checkLocalHeader(
        _ file: borrowing FileDescriptor, _ entry: inout ZipEntry, window: ReadWindow, centralOffset: Int64
    ) throws {
        let name = entry.name
        let offset = entry.localHeaderOffset
        let fixed = try window.bytes(file, at: offset, count: ZipFormat.localHeaderSize, parser: self, what: "local header", entry: name)
        guard fixed.le32(0) == ZipFormat.localHeaderSignature, var header = LocalHeader(parsing: fixed) else {
            throw fail(.malformed, name, "no local header where the central directory says (bad signature)")
        }
        try compareLocalFixedFields(header, with: entry)
        let variable = try window.bytes(
            file, at: offset + Int64(ZipFormat.localHeaderSize), count: header.nameLength + header.extraLength,
            parser: self, what: "local header", entry: name)
        let localName = UnsafeRawBufferPointer(rebasing: variable[0..<header.nameLength])
        let extra = UnsafeRawBufferPointer(
            rebasing: variable[header.nameLength..<(header.nameLength + header.extraLength)])
        let extras = try parseLocalExtras(extra, header: &header, localName: localName, entry: name)
        try compareLocalNameAndExtras(header, localName: localName, extras: extras, with: entry)
        try compareLocalSizes(header, with: entry)
        entry.dataOffset = offset + Int64(ZipFormat.localHeaderSize + header.nameLength + header.extraLength)
        guard entry.dataOffset <= centralOffset, entry.compressedSize <= centralOffset - entry.dataOffset else {
            throw fail(.overlap, name, "its data runs into the central directory (compressed size too large)")
        }
        var end = entry.dataOffset + entry.compressedSize
        if entry.hasDataDescriptor {
            end += try checkDescriptor(
                file, entry, at: end,
                wide: extras.hasZip64 || entry.compressedSize >= 0xFFFF_FFFF || entry.uncompressedSize >= 0xFFFF_FFFF,
                window: window, centralOffset: centralOffset)
        }
        entry.endOffset = end
    }

    /// The flags that matter, the method and the MS-DOS time must be the central ones.
    func compareLocalFixedFields(_ header: LocalHeader, with entry: ZipEntry) throws {
        let name = entry.name
        let compared: UInt16 = ZipFormat.flagEncrypted | ZipFormat.flagDataDescriptor | ZipFormat.flagUTF8
        guard header.flags & compared == entry.flags & compared else {
            throw fail(.inconsistent, name, "the local and central headers disagree on the flags")
        }
        guard header.method == entry.method.rawValue else {
            throw fail(.inconsistent, name, "the local and central headers disagree on the compression method")
        }
        guard header.dosTime == entry.dosTime, header.dosDate == entry.dosDate else {
            throw fail(.inconsistent, name, "the local and central headers disagree on the modification date")
        }
    }

    /// Reads the local extra field: ZIP64 sizes replace the marked ones in `header`.
    func parseLocalExtras(
        _ extra: UnsafeRawBufferPointer, header: inout LocalHeader, localName: UnsafeRawBufferPointer, entry name: String
    ) throws -> LocalExtras {
        var extras = LocalExtras()
        let seen = try walkExtraField(extra, place: "local", entry: name) { id, data in
            switch id {
            case ZipFormat.zip64ExtraID:
                extras.hasZip64 = true
                // In a local header the ZIP64 field holds both sizes when either is marked.
                if header.uncompressedSize == 0xFFFF_FFFF || header.compressedSize == 0xFFFF_FFFF {
                    guard data.count >= 16 else {
                        throw fail(.malformed, name, "the local ZIP64 extra field is too short for both sizes")
                    }
                    header.uncompressedSize = data.le64(0)
                    header.compressedSize = data.le64(8)
                }
            case ZipFormat.unicodePathID:
                if data.count > 5, data[0] == 1, data.le32(1) == CRC32.update(0, localName),
                    let unicode = String(validating: data[5...], as: UTF8.self)
                {
                    extras.unicodeName = unicode
                }
            case ZipFormat.extendedTimestampID:
                extras.modificationSeconds = ExtendedTimestampField(parsing: data).modificationSeconds
            case ZipFormat.contentHashID:
                extras.contentHash = try parseContentHash(data, entry: name)
            default: break
            }
        }
        extras.seen = seen
        return extras
    }

    /// The local name, the paired extra records, the extended time and the content hash
    /// must agree with the central record.
    func compareLocalNameAndExtras(
        _ header: LocalHeader, localName: UnsafeRawBufferPointer, extras: LocalExtras, with entry: ZipEntry
    ) throws {
        let name = entry.name
        let localPaired = extras.seen.intersection(ZipFormat.pairedExtraIDs)
        guard localPaired == entry.pairedExtras else {
            let differing = localPaired.symmetricDifference(entry.pairedExtras).sorted().map { "0x" + hex16($0) }
            throw fail(
                .inconsistent, name,
                "the local and central headers disagree on the extra fields (\(differing.joined(separator: ", ")) in only one)")
        }
        guard localNameMatches(localName, flags: header.flags, entry: entry)
            || extras.unicodeName.map({ PathOrder.sameBytes(ZipNames.droppingDotSlashes($0), name) }) == true
        else {
            throw fail(.inconsistent, name, "the local header names a different file")
        }
        // Both headers may carry the same Unicode path over different stored names, which
        // readers ignoring the field would take for two different files.
        if let stored = entry.storedNameBytes, !localName.elementsEqual(stored) {
            throw fail(
                .inconsistent, name,
                "the local and central headers store different names under the same Unicode path field (0x7075)")
        }
        // unzip and bsdtar take the local time, python and we the central one: only
        // agreement is safe (both fields present is already checked above).
        if extras.modificationSeconds != entry.extendedModificationTime {
            throw fail(
                .inconsistent, name,
                "the local and central extended timestamps (0x5455) disagree on the modification time (local \(describeSeconds(extras.modificationSeconds)), central \(describeSeconds(entry.extendedModificationTime)), in Unix seconds)")
        }
        if let localHash = extras.contentHash, let centralHash = entry.contentHash, localHash != centralHash {
            throw fail(.inconsistent, name, "the local and central headers disagree on the content hash")
        }
    }

    /// Whether the local name is the central one: compared after decoding the same way
    /// (CP437 or UTF-8 by the flag, separators fixed as the central name's were).
    func localNameMatches(_ localName: UnsafeRawBufferPointer, flags: UInt16, entry: ZipEntry) -> Bool {
        guard var decoded = ZipNames.decode(localName, utf8Flag: flags & ZipFormat.flagUTF8 != 0) else { return false }
        if entry.usesBackslashSeparators { decoded = ZipNames.separatorsFixed(decoded, host: 0) }
        decoded = ZipNames.droppingDotSlashes(decoded)
        return PathOrder.sameBytes(decoded, entry.relativePath.isRoot ? "" : entry.name)
    }

    /// The CRC-32 and sizes must be the central ones; with a data descriptor they may be zero.
    func compareLocalSizes(_ header: LocalHeader, with entry: ZipEntry) throws {
        let name = entry.name
        if !entry.hasDataDescriptor {
            guard header.crc32 == entry.crc32 else {
                throw fail(.inconsistent, name, "the local and central headers disagree on the CRC-32")
            }
            guard header.compressedSize == UInt64(entry.compressedSize),
                header.uncompressedSize == UInt64(entry.uncompressedSize)
            else {
                throw fail(.inconsistent, name, "the local and central headers disagree on the sizes")
            }
        } else {
            // Streamed: the local fields are zero, or (some writers) already the real values.
            guard header.crc32 == 0 || header.crc32 == entry.crc32,
                header.compressedSize == 0 || header.compressedSize == UInt64(entry.compressedSize),
                header.uncompressedSize == 0 || header.uncompressedSize == UInt64(entry.uncompressedSize)
            else {
                throw fail(.inconsistent, name, "the local and central headers disagree on the CRC-32 or sizes")
            }
        }
    }

    /// Checks the data descriptor at `offset` against the central record; returns its length.
    func checkDescriptor(
        _ file: borrowing FileDescriptor, _ entry: ZipEntry, at offset: Int64, wide: Bool, window: ReadWindow,
        centralOffset: Int64
    ) throws -> Int64 {
        let available = Int(min(Int64(24), centralOffset - offset))
        let bytes = try window.bytes(file, at: offset, count: available, parser: self, what: "data descriptor", entry: entry.name)
        let sizeWidth = wide ? 8 : 4
        func matches(at start: Int) -> Bool {
            guard start + 4 + 2 * sizeWidth <= bytes.count else { return false }
            guard bytes.le32(start) == entry.crc32 else { return false }
            let compressed = wide ? bytes.le64(start + 4) : UInt64(bytes.le32(start + 4))
            let uncompressed = wide ? bytes.le64(start + 4 + sizeWidth) : UInt64(bytes.le32(start + 4 + sizeWidth))
            return compressed == UInt64(entry.compressedSize) && uncompressed == UInt64(entry.uncompressedSize)
        }
        if bytes.count >= 4, bytes.le32(0) == ZipFormat.dataDescriptorSignature, matches(at: 4) {
            return Int64(4 + 4 + 2 * sizeWidth)
        }
        if matches(at: 0) { return Int64(4 + 2 * sizeWidth) }
        throw fail(.inconsistent, entry.name, "the data descriptor does not match the central directory's CRC-32 and sizes")
    }

    // MARK: Paths and totals

    /// Builds the archive's path tree, refusing duplicates and entries beneath files or
    /// links. The directories the entries imply count against the entry limit: each is
    /// created on extraction (one entry 2,047 levels deep makes 2,047 directories).
    ///
    /// - Complexity: O(bytes of all names), whatever the depth.
    func checkPaths(_ entries: [ZipEntry]) throws -> PathTree {
        var tree = PathTree(expectedEntries: entries.count)
        for (index, entry) in entries.enumerated() {
            switch tree.insert(entry: index, path: entry.relativePath, kind: entry.kind, maximumNodes: limits.maximumEntries) {
            case .inserted: break
            case .duplicate:
                throw fail(.duplicate, entry.name, "the archive holds this path more than once")
            case .beneath(let deeper, let ancestor):
                let name = entries[Int(deeper)].name
                let parent = ZipError.printable(tree.path(of: ancestor).string)
                // An implied directory the current entry lands on takes the entry's kind.
                let ancestorNode = tree.nodes[Int(ancestor)]
                let ancestorKind = ancestorNode.entry >= 0 ? ancestorNode.kind : entry.kind
                if ancestorKind == .symbolicLink {
                    throw fail(
                        .symlinkEscape, name,
                        "the entry lies beneath the symbolic link '\(parent)' (extracting it would write through the link)")
                }
                throw fail(.duplicate, name, "the entry lies beneath '\(parent)', which is a file")
            case .tooMany:
                throw fail(
                    .limit, nil,
                    "the entries and the directories their paths imply are more than the limit of \(limits.maximumEntries)")
            }
        }
        return tree
    }

    func checkTotals(_ entries: [ZipEntry]) throws {
        var total: Int64 = 0
        var compressedTotal: Int64 = 0
        for entry in entries {
            guard entry.uncompressedSize <= limits.maximumEntrySize else {
                throw fail(
                    .limit, entry.name,
                    "declares \(entry.uncompressedSize) bytes, over the per-entry limit of \(limits.maximumEntrySize)")
            }
            total += entry.uncompressedSize
            compressedTotal += entry.compressedSize
            guard total <= limits.maximumTotalSize else {
                throw fail(.limit, nil, "the entries declare more than the limit of \(limits.maximumTotalSize) bytes in all")
            }
        }
        if total > limits.ratioThreshold {
            let ratio = Double(total) / Double(max(compressedTotal, 1))
            guard ratio <= limits.maximumRatio else {
                throw fail(
                    .limit, nil,
                    "the entries expand \(Int(ratio)):1, over the limit of \(Int(limits.maximumRatio)):1 (a zip bomb?)")
            }
        }
    }
}

/// Serves small reads from a 256 KiB window of the file, so that reading thousands of
/// local headers in file order costs a few large reads instead of one small read each.
/// A returned buffer is valid until the next call.
final class ReadWindow {
    let size: Int64
    private var start: Int64 = 0
    private var filled = 0
    private let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: ReadWindow.length, alignment: 16)
    /// Larger than any single request (a header's name and extra are at most 128 KiB).
    static let length = 256 * 1024

    init(size: Int64) { self.size = size }

    deinit { storage.deallocate() }

    func bytes(
        _ file: borrowing FileDescriptor, at offset: Int64, count: Int, parser: ArchiveParser, what: String, entry: String
    ) throws -> UnsafeRawBufferPointer {
        guard offset >= 0, count >= 0, count <= Self.length, offset <= size, Int64(count) <= size - offset else {
            throw parser.fail(.truncated, entry, "the \(what) runs past the end of the file")
        }
        if !(offset >= start && offset + Int64(count) <= start + Int64(filled)) {
            let length = Int(min(Int64(Self.length), size - offset))
            let got = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: storage[..<length]), at: offset)
            start = offset
            filled = got
            guard got >= count else { throw parser.fail(.truncated, entry, "the file ended while reading the \(what)") }
        }
        let from = Int(offset - start)
        return UnsafeRawBufferPointer(rebasing: storage[from..<(from + count)])
    }
}

/// A Unix time in seconds for messages, or "none".
func describeSeconds(_ seconds: Int64?) -> String { seconds.map { "\($0)" } ?? "none" }

func hex16(_ value: UInt16) -> String { String(value, radix: 16).leftPadded(to: 4) }

enum FileKindName {
    static func of(_ mode: UInt32) -> String {
        switch mode & 0o170000 {
        case 0o010000: return "FIFO"
        case 0o140000: return "socket"
        case 0o020000: return "character device"
        case 0o060000: return "block device"
        default: return "file of unknown type (mode \(String(mode, radix: 8)))"
        }
    }
}
