import Foundation
import PackageCore
import PackageTestSupport
@testable import PkgToolCLI

/// Runs `pkgtool` in-process with a capturing console.
func pkgtool(_ arguments: String...) -> (status: ExitStatus, output: String, errors: [String]) {
    pkgtool(arguments)
}

func pkgtool(_ arguments: [String]) -> (status: ExitStatus, output: String, errors: [String]) {
    let console = Console(capturing: ())
    let status = PkgTool.run(arguments, console: console)
    return (status, console.capturedText, console.capturedErrors)
}

/// The built `pkgtool` executable, beside the test bundle.
func pkgtoolExecutable() -> String {
    let runner = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = (runner as NSString).deletingLastPathComponent
    // The test runner may sit inside a bundle directory; walk up until pkgtool is found.
    for _ in 0..<4 {
        let candidate = directory + "/pkgtool"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = (directory as NSString).deletingLastPathComponent
    }
    return "pkgtool"
}
