import Foundation
import PackageCore
import PackageTestSupport
import PackageZip
import Testing

/// libzip's regression archives (`../shared/corpus/libzip-regress`), handled as its README
/// says a strict reader should. Skipped when the corpus is absent.
@Suite(
    "The libzip regression corpus",
    .enabled(if: corpusDirectory() != nil, "needs libzip's regression corpus (../shared/corpus or PKGTOOL_CORPUS)"))
struct CorpusTests {
    /// What we do with an archive of the corpus: accept, or refuse with this kind.
    static func expectation(_ name: String) -> ZipError.Kind?? {
        if name.hasPrefix("incons-") { return .some(nil) }  // refused, any inconsistency kind
        if name.hasPrefix("encrypt") && name != "encrypt-none.zip" { return .encrypted }
        switch name {
        case "hmac-error.zip", "broken.zip", "empty-pkware.zip": return .encrypted
        case "bogus.zip", "testfile-truncated.zip": return .notAnArchive
        case "junk-at-start.zip", "junk-at-end.zip", "testextrabytes.zip": return .junk
        case "filename_duplicate.zip": return .duplicate
        case "filename_duplicate_empty.zip", "filename_empty.zip": return .unsafeName
        case "multidisk.zip": return .unsupported
        // A second archive in the comment: other tools read that one (issue 17).
        case "zip-in-archive-comment.zip", "zip64-in-archive-comment.zip": return .ambiguous
        case "testbzip2.zip", "testbzip2broken.zip", "testfile-lzma.zip", "lzma-no-eos.zip", "testfile-xz.zip",
            "testfile-zstd.zip":
            return .unsupportedMethod
        // gap*.zip: 17 unexplained bytes between entries (and the first entry's CRC covers
        // them: python's testzip fails it too). We refuse gaps; see Specs/zip.md.
        case "gap.zip", "gap-add.zip", "gap-delete.zip", "gap-replace.zip": return .inconsistent
        default: return nil  // accepted
        }
    }

    @Test("every archive is accepted or refused as its class says")
    func classes() throws {
        let corpus = try #require(corpusDirectory())
        let names = try listing(corpus).filter { $0.hasSuffix(".zip") }
        #expect(names.count >= 160)
        let scratch = try TemporaryDirectory("zip-corpus")
        for name in names {
            let path = corpus + "/" + name
            let expected = Self.expectation(name)
            do {
                let archive = try ZipArchive.open(path)
                try archive.verify()
                #expect(expected == nil, "\(name) was accepted")
                if expected == nil {
                    let destination = scratch.url(name + ".out")
                    try archive.extract(to: destination, workers: 1)
                }
            } catch let error as ZipError {
                switch expected {
                case nil: Issue.record("\(name) was refused: \(error)")
                case .some(nil): break
                case .some(.some(let kind)): #expect(error.kind == kind, "\(name): \(error)")
                }
                #expect(error.description.hasPrefix("refused '\(path)'"))
            }
        }
    }

    @Test("an archive hidden in the comment makes the archive ambiguous: refused, naming what the comment holds")
    func hiddenArchives() throws {
        let corpus = try #require(corpusDirectory())
        for name in ["zip-in-archive-comment.zip", "zip64-in-archive-comment.zip"] {
            #expect {
                _ = try ZipArchive.open(corpus + "/" + name)
            } throws: { error in
                let refusal = error as? ZipError
                return refusal?.kind == .ambiguous && refusal?.description.contains("hidden in the comment") == true
            }
        }
    }

    @Test("manyfiles: wrapped 16-bit counts are read; counts that disagree otherwise are refused")
    func manyFiles() throws {
        let corpus = try #require(corpusDirectory())
        let scratch = try TemporaryDirectory("zip-manyfiles")
        let outer = try ZipArchive.open(corpus + "/manyfiles-zip.zip")
        try outer.extract(to: scratch.url("inner"))
        let expectations: [String: Int?] = [
            "manyfiles.zip": 70_000, "manyfiles-65536.zip": 65_536, "manyfiles-133000.zip": 133_000,
            "manyfiles-zip64.zip": 70_000, "manyfiles-fewer.zip": nil, "manyfiles-more.zip": nil,
            "manyfiles-zip64-modulo.zip": nil,
        ]
        for (name, count) in expectations {
            let path = scratch.url("inner/" + name)
            if let count {
                let archive = try ZipArchive.open(path)
                #expect(archive.entries.count == count, "\(name)")
            } else {
                #expect(throws: ZipError.self, "\(name)") { _ = try ZipArchive.open(path) }
            }
        }
    }
}
