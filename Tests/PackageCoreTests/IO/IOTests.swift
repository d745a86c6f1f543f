import Glibc
import PackageTestSupport
import Testing
@testable import PackageCore

@Suite("The I/O layer")
struct IOTests {
    @Test("errors name the operation, the path, the errno and the call")
    func errorMessages() throws {
        let directory = try TemporaryDirectory("io-errors")
        let missing = directory.url("missing/file")
        #expect(throws: FileSystemError.self) { _ = try FileDescriptor.open(missing) }
        do {
            _ = try FileDescriptor.open(missing)
        } catch {
            #expect(error.description == "cannot open '\(missing)': No such file or directory (ENOENT from openat)")
            #expect(error.isNotFound)
        }
        do {
            try FileSystem.exchange(directory.url("a"), with: directory.url("b"))
        } catch {
            #expect(
                error.description
                    == "cannot exchange '\(directory.url("a"))' with '\(directory.url("b"))': No such file or directory (ENOENT from renameat2(RENAME_EXCHANGE))"
            )
        }
        #expect(Errno.noSpace.description == "No space left on device (ENOSPC)")
        #expect(Errno(rawValue: 9999).name == "errno 9999")
    }

    @Test("writes survive partial transfers and EINTR")
    func stutteringWrites() throws {
        let directory = try TemporaryDirectory("io-stutter")
        var generator = SeededBytes(seed: 5)
        let bytes = generator.bytes(2_500_000)
        try IOFaultInjection.withInjector(StutteringIO()) {
            try Files.write(directory.url("out"), bytes)
        }
        #expect(try Files.read(directory.url("out")) == bytes)
    }

    @Test("an injected ENOSPC surfaces as a clear error")
    func injectedNoSpace() throws {
        let directory = try TemporaryDirectory("io-enospc")
        let path = directory.url("out")
        #expect {
            try IOFaultInjection.withInjector(FailingStep(.write, pathFragment: "out", fault: .error(.noSpace))) {
                try Files.write(path, "data")
            }
        } throws: { error in
            (error as? FileSystemError)?.description == "cannot write '\(path)': No space left on device (ENOSPC from write)"
        }
    }

    @Test("atomic replace: new contents appear whole, a failure leaves the old file and no litter")
    func atomicReplace() throws {
        let directory = try TemporaryDirectory("io-atomic")
        let path = directory.url("manifest")
        try AtomicFile.write(Array("old".utf8), to: path)
        #expect(try Files.read(path) == Array("old".utf8))
        try AtomicFile.write(Array("new contents".utf8), to: path, permissions: 0o600)
        #expect(try Files.read(path) == Array("new contents".utf8))
        #expect(try FileSystem.status(path).permissions == 0o600)
        for step in [IOStep.write, .sync, .link, .rename] {
            #expect(throws: FileSystemError.self) {
                try IOFaultInjection.withInjector(FailingStep(step, pathFragment: "", fault: .error(.ioError))) {
                    try AtomicFile.write(Array("broken".utf8), to: path)
                }
            }
            #expect(try Files.read(path) == Array("new contents".utf8), "after a failed \(step)")
            let handle = try FileDescriptor.openDirectory(directory.path)
            #expect(try DirectoryListing.names(in: handle) == ["manifest"], "no litter after a failed \(step)")
        }
    }

    @Test("copies stream in chunks, in the kernel or hashed through the buffer")
    func copies() throws {
        let directory = try TemporaryDirectory("io-copy")
        try Files.writeRandom(directory.url("source"), size: 3 * (1 << 20) + 123, seed: 8)
        let expected = try ContentHash.ofFile(atPath: directory.url("source"), buffer: ChunkBuffer()).hash
        for hashing in [false, true] {
            let source = try FileDescriptor.open(directory.url("source"))
            let target = try FileDescriptor.open(
                directory.url("copy-\(hashing)"), access: .writeOnly, options: [.create, .exclusive])
            var chunks = 0
            let outcome = try FileCopy.copy(from: source, to: target, buffer: ChunkBuffer(), hashing: hashing) { _ in
                chunks += 1
            }
            #expect(outcome.bytes == 3 * (1 << 20) + 123)
            #expect(chunks == 4)
            #expect(outcome.inKernel == !hashing)
            if hashing { #expect(outcome.hash == expected) }
            #expect(try ContentHash.ofFile(atPath: directory.url("copy-\(hashing)"), buffer: ChunkBuffer()).hash == expected)
        }
    }

    @Test("directory listings skip dot entries and refuse non-UTF-8 names")
    func listings() throws {
        let directory = try TemporaryDirectory("io-list")
        try Files.write(directory.url("a"), "")
        try Files.makeDirectory(directory.url("b"))
        let handle = try FileDescriptor.openDirectory(directory.path)
        #expect(try DirectoryListing.entries(in: handle).sorted { $0.name < $1.name }.map(\.kind) == [.regular, .directory])
        let raw: [CChar] = Array((directory.path + "/bad").utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
        #expect(open(raw, O_CREAT | O_WRONLY, 0o644) >= 0)
        #expect(throws: FileSystemError.self) { try DirectoryListing.entries(in: handle) }
    }
}
