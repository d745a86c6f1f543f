import PackageCore
import PackageTestSupport
import Testing

/// `TreeScanner.pathDonor`: a scan keeps another tree's path strings for files of the same
/// bytes (storage only), so that `diff SRC PKG` holds each path once; what it finds is what
/// a scan without a donor finds, and twins that differ only in normalisation stay apart.
@Suite("A scan's path donor")
struct PathDonorTests {
    @Test func theScanKeepsTheDonorsStringsAndFindsTheSameTree() throws {
        let directory = try TemporaryDirectory("path-donor")
        for tree in ["one", "two"] {
            try Files.makeDirectory(directory.url(tree) + "/pages-of-the-document")
            try Files.write(directory.url(tree) + "/pages-of-the-document/page-number-0001.json", "1")
            try Files.write(directory.url(tree) + "/pages-of-the-document/caf\u{E9}-menu-of-the-day.txt", "nfc")
        }
        try Files.write(directory.url("one") + "/pages-of-the-document/cafe\u{301}-menu-of-the-day.txt", "nfd")
        let donor = try PackageScan.scan(directory.url("two"), useManifest: false).snapshot
        let plain = try PackageScan.scan(directory.url("one"), useManifest: false).snapshot
        let shared = try PackageScan.scan(directory.url("one"), useManifest: false, pathDonor: donor).snapshot
        #expect(shared == plain)
        #expect(shared.entries.count == 4)
        func storage(_ path: String) -> UnsafeRawPointer? {
            var copy = path
            return copy.withUTF8 { UnsafeRawPointer($0.baseAddress) }
        }
        for entry in shared.entries where entry.kind == .regular {
            let match = donor.entries.first { PathOrder.sameBytes($0.path, entry.path) }
            if let match {
                #expect(storage(match.path) == storage(entry.path), "\(entry.path) shares the donor's string")
            } else {
                #expect(Array(entry.path.utf8).contains(0xCC), "only the NFD twin is the scan's own")
            }
        }
    }
}
