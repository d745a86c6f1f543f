import PackageTestSupport
import Testing
@testable import PackageCore

/// The one "build beside, then swap in" mechanism.
@Suite("StagedReplacement")
struct StagedReplacementTests {
    @Test("a directory replaced: exchanged, the old one removed; a new one: renamed; nothing left beside")
    func directory() throws {
        let home = try TemporaryDirectory("staged")
        let target = home.url("doc")
        for round in 0..<2 {
            let staged = try StagedReplacement(replacing: target, kind: .directory(permissions: 0o755))
            try Files.write(staged.stagingPath + "/v", "version \(round)")
            let replaced = try staged.commit(durability: .full)
            #expect(replaced == (round == 1))
            try staged.discard()
            #expect(try Files.read(target + "/v") == Array("version \(round)".utf8))
            #expect(try Trees.names(home.path) == ["doc"])
        }
    }

    @Test("an abandoned staging entry goes with its owner; a sweep removes a dead one but never a live one")
    func sweep() throws {
        let home = try TemporaryDirectory("staged-sweep")
        let target = home.url("out.zip")
        do {
            let abandoned = try StagedReplacement(replacing: target, kind: .file(permissions: 0o644))
            _ = abandoned
        }
        #expect(try Trees.names(home.path) == [])
        let live = try StagedReplacement(replacing: target, kind: .file(permissions: 0o644))
        // A dead one, as a crash leaves it: a staging name nobody holds.
        try Files.write(home.url(SiblingNames(forName: "out.zip").newStaging()), "litter")
        #expect(try StagedReplacement.sweepLeftovers(beside: target) == 1)
        #expect(try Trees.names(home.path) == [live.stagingName])
        try live.commit(durability: .none, exchange: false)
        #expect(try Trees.names(home.path) == ["out.zip"])
    }

    @Test("a version set aside with nothing at the target is put back by the sweep")
    func asideRestored() throws {
        let home = try TemporaryDirectory("staged-aside")
        let target = home.url("doc")
        try Files.makeDirectory(home.url(SiblingNames(forName: "doc").newAside()))
        #expect(try StagedReplacement.sweepLeftovers(beside: target) == 1)
        #expect(try Trees.names(home.path) == ["doc"])
    }

    /// O_TMPFILE refused, as by a file system without it; and optionally one more step failing.
    struct WithoutUnnamedFiles: IOFaultInjector {
        var failing: IOStep?
        func fault(before step: IOStep, path: String) -> InjectedFault? {
            if step == .create && path == "." { return .error(.notSupported) }
            return step == failing ? .error(.ioError) : nil
        }
    }

    @Test("a new file where O_TMPFILE is missing: a tmp- sibling from the start, removed by every failure before the rename")
    func newFileWithoutUnnamedFiles() throws {
        let home = try TemporaryDirectory("staged-no-tmpfile")
        let target = home.url("record")
        try IOFaultInjection.withInjector(WithoutUnnamedFiles()) {
            try AtomicFile.write(Array("first".utf8), to: target, permissions: 0o600)
        }
        #expect(try Files.read(target) == Array("first".utf8))
        #expect(try FileSystem.status(target).permissions == 0o600)
        for step in [IOStep.write, .setPermissions, .sync, .rename] {
            #expect(throws: FileSystemError.self) {
                try IOFaultInjection.withInjector(WithoutUnnamedFiles(failing: step)) {
                    try AtomicFile.write(Array("second".utf8), to: target)
                }
            }
            #expect(try Files.read(target) == Array("first".utf8), "after a failed \(step)")
            #expect(try Trees.names(home.path) == ["record"], "no litter after a failed \(step)")
        }
    }
}
