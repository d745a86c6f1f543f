import Dispatch
import Glibc
import PackageTestSupport
import Synchronization
import Testing
@testable import PackageCore

/// The wrappers code outside the I/O layer goes through instead of calling the system.
@Suite("The I/O seam")
struct IOSeamTests {
    @Test("calls relative to a folder name the path the person knows, built only on failure")
    func displayPaths() throws {
        let directory = try TemporaryDirectory("io-seam-names")
        try Files.write(directory.url("file"), "data")
        try FileSystem.makeSymbolicLink(directory.url("link"), target: "file")
        let folder = try FileDescriptor.openDirectory(directory.path)
        let built = Atomic<Int>(0)
        func shown(_ name: String) -> String {
            built.add(1, ordering: .relaxed)
            return "Notes.pkg/" + name
        }
        #expect(try FileSystem.status("file", relativeTo: folder.rawValue, displayPath: shown("file")).kind == .regular)
        #expect(
            try FileSystem.readSymbolicLinkBytes("link", relativeTo: folder.rawValue, displayPath: shown("link"))
                == Array("file".utf8))
        try FileSystem.remove("link", relativeTo: folder.rawValue, displayPath: shown("link"))
        let builtOnSuccess = built.load(ordering: .relaxed)
        #expect(builtOnSuccess == 0)

        #expect {
            _ = try FileSystem.status("missing", relativeTo: folder.rawValue, displayPath: shown("missing"))
        } throws: { error in
            (error as? FileSystemError)?.description
                == "cannot stat 'Notes.pkg/missing': No such file or directory (ENOENT from fstatat)"
        }
        #expect {
            _ = try FileSystem.readSymbolicLinkBytes("file", relativeTo: folder.rawValue, displayPath: shown("file"))
        } throws: { error in
            (error as? FileSystemError)?.description == "cannot read link 'Notes.pkg/file': Invalid argument (EINVAL from readlinkat)"
        }
        #expect {
            try FileSystem.remove("link", relativeTo: folder.rawValue, displayPath: shown("link"))
        } throws: { error in
            (error as? FileSystemError)?.errno == .noSuchFileOrDirectory
                && (error as? FileSystemError)?.path == "Notes.pkg/link"
        }
        let builtOnFailure = built.load(ordering: .relaxed)
        #expect(builtOnFailure == 3)
    }

    @Test("realPath resolves links, and names the path and realpath when it cannot")
    func realPath() throws {
        let directory = try TemporaryDirectory("io-seam-realpath")
        try FileSystem.makeDirectory(directory.url("real"))
        try FileSystem.makeSymbolicLink(directory.url("alias"), target: "real")
        let resolvedFolder = try FileSystem.realPath(directory.path)
        #expect(try FileSystem.realPath(directory.url("alias")) == resolvedFolder + "/real")
        let missing = directory.url("missing/x")
        #expect {
            _ = try FileSystem.realPath(missing)
        } throws: { error in
            (error as? FileSystemError)?.description
                == "cannot resolve '\(missing)': No such file or directory (ENOENT from realpath)"
        }
    }

    @Test("the current offset of a file, and the error of a pipe that has none")
    func currentOffset() throws {
        let directory = try TemporaryDirectory("io-seam-offset")
        let file = try FileDescriptor.open(directory.url("f"), access: .readWrite, options: [.create])
        try file.write(contentsOf: Array("hello".utf8))
        #expect(try file.currentOffset() == 5)
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reading = FileDescriptor(adopting: ends[0], path: "the pipe")
        _ = FileDescriptor(adopting: ends[1], path: "the pipe's end")
        #expect {
            _ = try reading.currentOffset()
        } throws: { error in
            (error as? FileSystemError)?.description == "cannot seek in 'the pipe': Illegal seek (ESPIPE from lseek)"
        }
    }

    @Test("a detached thread runs its body, with a stack size given or the default")
    func detachedThreads() throws {
        for size in [nil, 256 << 10] as [Int?] {
            let done = DispatchSemaphore(value: 0)
            let ran = Atomic<Bool>(false)
            try DetachedThread.start(stackSize: size) {
                ran.store(true, ordering: .relaxed)
                done.signal()
            }
            done.wait()
            let didRun = ran.load(ordering: .relaxed)
            #expect(didRun)
        }
    }

    @Test("the coarse clock is a lower bound of the real-time one, which the seconds agree with")
    func clocks() {
        let first = SystemClock.monotonicNanoseconds
        let coarse = SystemClock.coarseRealtimeNanoseconds
        let real = SystemClock.realtimeNanoseconds
        let seconds = SystemClock.secondsSinceEpoch
        #expect(coarse <= real)
        #expect(seconds >= real / 1_000_000_000 - 1)
        #expect(SystemClock.monotonicNanoseconds >= first)
    }
}
