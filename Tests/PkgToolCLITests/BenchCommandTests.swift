import Foundation
import Testing
import PackageTestSupport
import PackageTestTraits

@testable import PkgToolCLI

@Suite("pkgtool bench")
struct BenchCommandTests {
    @Test func helpSaysWhereTheOptionsAre() {
        let help = pkgtool("help", "bench")
        #expect(help.status == .success)
        #expect(help.output.hasPrefix("usage: pkgtool bench [--quick | --sweep] [pkgbench options]"))
        #expect(help.output.contains("'pkgtool bench --help' prints its"))
    }

    static var pkgbenchBuilt: Bool {
        let pkgtool = pkgtoolExecutable()
        return FileManager.default.isExecutableFile(atPath: (pkgtool as NSString).deletingLastPathComponent + "/pkgbench")
    }

    /// The real executable execs pkgbench with the arguments unchanged (never in-process:
    /// exec would replace the test runner).
    @Test(Prerequisite.needs(pkgbenchBuilt, "pkgbench built beside pkgtool"))
    func execsPkgbenchWithTheArgumentsUnchanged() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pkgtoolExecutable())
        process.arguments = ["bench", "--help"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: readToEndOfFile(output.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(text.hasPrefix("usage: pkgbench [--quick | --sweep] [options]"))

        let wrong = Process()
        wrong.executableURL = URL(fileURLWithPath: pkgtoolExecutable())
        wrong.arguments = ["bench", "--no-such-option"]
        let errors = Pipe()
        wrong.standardOutput = FileHandle.nullDevice
        wrong.standardError = errors
        try wrong.run()
        let message = String(decoding: readToEndOfFile(errors.fileHandleForReading), as: UTF8.self)
        wrong.waitUntilExit()
        #expect(wrong.terminationStatus == 2)
        #expect(message.hasPrefix("pkgbench: unknown option '--no-such-option'"))
    }
}
