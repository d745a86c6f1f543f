import Foundation
import PackageTestSupport
import Testing

@testable import PkgToolCLI

/// A `--json` command prints JSON on failure too: `{"error": {"code", "message"}}` on
/// stdout, the same line as ever on stderr, so a script that parses stdout never meets an
/// empty document.
@Suite("--json failures")
struct JSONFailureTests {
    func errorObject(_ output: String) -> (code: Int, message: String)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any],
            let error = object["error"] as? [String: Any], let code = error["code"] as? Int,
            let message = error["message"] as? String
        else { return nil }
        return (code, message)
    }

    @Test func failuresPrintAnErrorObject() throws {
        let directory = try TemporaryDirectory("json-failure")
        let save = pkgtool("save", "--json", directory.url("missing"), directory.url("doc.pkg"))
        #expect(save.status == .trouble)
        let parsed = try #require(errorObject(save.output), "\(save.output)")
        #expect(parsed.code == 2)
        #expect(save.errors.first == parsed.message)

        let usage = pkgtool("verify", "--json", "--no-such-option", directory.path)
        #expect(usage.status == .trouble)
        #expect(errorObject(usage.output)?.message.contains("unknown option") == true, "\(usage.output)")

        // Without --json, stdout stays empty; a command whose JSON is its answer (a diff
        // that found changes) prints only that.
        #expect(pkgtool("save", directory.url("missing"), directory.url("doc.pkg")).output.isEmpty)
        try Files.makeDirectory(directory.url("a"))
        try Files.makeDirectory(directory.url("b"))
        try Files.write(directory.url("b/x"), "x")
        let diff = pkgtool("diff", "--json", directory.url("a"), directory.url("b"))
        #expect(diff.status == .failure)
        #expect(errorObject(diff.output) == nil)
    }
}
