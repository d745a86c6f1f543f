// The code of the article "Packing and unpacking safely" (PackageZip.docc), compiled and run.
import PackageCore
import PackageZip

/// A package packed, checked, listed and unpacked.
func guideZip(package: String, archive: String, restored: String) throws -> ZipPackReport {
    // On all cores; a repack copies the unchanged entries of the archive it replaces, raw.
    let report = try ZipPacker.pack(package, to: archive)
    print("\(report.entries) entries, \(report.reused) reused, \(report.archiveBytes) bytes")

    do {
        let zip = try ZipArchive.open(archive)  // the whole structure checked, nothing inflated yet
        try zip.verify()  // every entry inflated: sizes, CRC-32 and content hashes
        try zip.extract(to: restored)  // built beside `restored`, renamed into place when complete
    } catch let refusal as ZipError {
        print(refusal)  // refused 'ARCHIVE': entry 'NAME': why
        throw refusal
    }
    return report
}

/// Packing options: reproducible bytes, the EPUB rule, a durable replacement.
func guideZipOptions(book: String, epub: String) throws -> ZipPackReport {
    var options = ZipPackOptions(level: 9)
    options.first = "mimetype"  // stored first, bare header: EPUB's and OpenDocument's rule
    options.modificationTime = 0  // every entry dated 1970: the same tree gives the same bytes
    options.durability = .full  // fsynced before it replaces the old archive
    return try ZipPacker.pack(book, to: epub, options: options)
}

/// An archive from a stranger, read within tight limits, one entry at a time.
func guideZipUntrusted(archive: String) throws -> [RelativePath: Int] {
    let limits = ZipLimits(maximumEntries: 10_000, maximumTotalSize: 256 << 20, maximumEntrySize: 64 << 20)
    let zip = try ZipArchive.open(archive, limits: limits)
    var sizes: [RelativePath: Int] = [:]  // keyed by bytes: "é" and "e\u{301}" are two entries
    for entry in zip.entries where entry.kind == .regular {
        sizes[entry.relativePath] = try zip.contents(of: entry).count  // checked like verify() does
    }
    return sizes
}
