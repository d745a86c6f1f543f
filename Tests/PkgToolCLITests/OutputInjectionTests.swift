import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// Two copies of a small tree; `new` gains one file named `name`.
private func treesDifferingBy(_ name: String, in directory: TemporaryDirectory) throws -> (old: String, new: String) {
    for side in ["old", "new"] {
        try Files.makeDirectory(directory.url(side + "/pages"))
        try Files.write(directory.url(side + "/pages/1.txt"), "one")
    }
    try Files.write(directory.url("new/" + name), "forged")
    return (directory.url("old"), directory.url("new"))
}

/// Whether raw ESC, or any other control character but the newline and tab that separate
/// records and fields, is in `text`.
private func hasRawControls(_ text: String) -> Bool {
    text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
}

@Suite("Names cannot forge output or reach the terminal")
struct OutputInjectionTests {
    @Test("diff of trees differing only by 'evil\\nM\\tfake.txt' prints exactly one line, quoted")
    func forgedDiffLine() throws {
        let directory = try TemporaryDirectory("inject-diff")
        let (old, new) = try treesDifferingBy("evil\nM\tfake.txt", in: directory)
        let result = pkgtool("diff", old, new)
        #expect(result.status == .failure)
        #expect(result.output == "A\t\"evil\\nM\\tfake.txt\"\n")
        // The real program's bytes on stdout, too.
        let process = try runProgram(pkgtoolExecutable(), ["diff", old, new])
        #expect(process.status == 1)
        #expect(process.output == "A\t\"evil\\nM\\tfake.txt\"\n")
        #expect(process.output.split(separator: "\n").count == 1)
    }

    @Test("-z: git's NUL-separated name-status, names as they are")
    func nullTerminatedDiff() throws {
        let directory = try TemporaryDirectory("inject-diff-z")
        let (old, new) = try treesDifferingBy("evil\nM\tfake.txt", in: directory)
        try FileSystem.rename(old + "/pages/1.txt", to: old + "/pages/one\u{1B}.txt")
        let result = pkgtool("diff", "-z", old, new)
        #expect(result.status == .failure)
        #expect(result.output == "A\0evil\nM\tfake.txt\0R\0pages/one\u{1B}.txt\0pages/1.txt\0")
        #expect(pkgtool("diff", "-z", "--json", old, new).status == .trouble)
        #expect(pkgtool("diff", "-z", "--stat", old, new).status == .trouble)
    }

    @Test("every hostile name: one quoted line in diff, ls, verify; no raw control character on stdout", arguments: hostileNames)
    func everyCommand(_ name: String) throws {
        let directory = try TemporaryDirectory("inject-all")
        let (old, new) = try treesDifferingBy(name, in: directory)
        let quoted = NameQuoting.quoted(name)
        #expect(quoted.hasPrefix("\"") && !hasRawControls(quoted))

        let diff = pkgtool("diff", old, new)
        #expect(diff.output == "A\t\(quoted)\n")

        let list = pkgtool("ls", new)
        #expect(list.output.contains(" \(quoted)\n"))
        #expect(!hasRawControls(list.output))
        let long = pkgtool("ls", "--long", new)
        #expect(long.output.split(separator: "\n").count == 3)  // pages/, pages/1.txt, the name
        #expect(!hasRawControls(long.output))

        // verify: the name as an extra entry of a package whose manifest predates it.
        #expect(pkgtool("manifest", old).status == .success)
        try Files.write(old + "/" + name, "late")
        let verify = pkgtool("verify", old)
        #expect(verify.status == .failure)
        #expect(verify.output.hasPrefix("extra\t\(quoted)\n"))

        // diff PKG (since the manifest), and the JSON forms, which escape as JSON does.
        #expect(pkgtool("diff", old).output == "A\t\(quoted)\n")
        for arguments in [["diff", "--json", old], ["ls", "--json", new], ["verify", "--json", old]] {
            let json = pkgtool(arguments)
            #expect(!hasRawControls(json.output.replacing("\n", with: "")), "\(arguments[0])")
            let parsed = try JSONSerialization.jsonObject(with: Data(json.output.utf8))
            #expect(String(describing: parsed).isEmpty == false)
            #expect(jsonStrings(parsed).contains(name), "\(arguments[0]) --json keeps the name exact")
        }

        // A ZIP archive of the tree: listed and compared the same way.
        let archive = directory.url("new.zip")
        #expect(pkgtool("pack", new, archive).status == .success)
        let zipList = pkgtool("ls", archive)
        #expect(zipList.output.contains(" \(quoted)\n"))
        #expect(!hasRawControls(zipList.output))
        #expect(pkgtool("diff", old, archive).output == "M\t\(quoted)\n")
    }

    @Test("ls -z: NUL after each entry, names raw, a link's target its own field")
    func nullTerminatedList() throws {
        let directory = try TemporaryDirectory("inject-ls-z")
        let root = directory.url("pkg")
        try Files.makeDirectory(root + "/d\nir")
        try Files.write(root + "/d\nir/f\u{1B}", "12345")
        try Files.symlink(root + "/link", to: "d\nir/f\u{1B}")
        let result = pkgtool("ls", "-z", root)
        #expect(result.status == .success)
        #expect(result.output == "d - d\nir/\0f 5 d\nir/f\u{1B}\0l 7 link\0d\nir/f\u{1B}\0")
        let text = pkgtool("ls", root)
        #expect(text.output == "d - \"d\\nir/\"\nf 5 \"d\\nir/f\\033\"\nl 7 link -> \"d\\nir/f\\033\"\n")
        let archive = directory.url("pkg.zip")
        #expect(pkgtool("pack", root, archive).status == .success)
        #expect(pkgtool("ls", "-z", archive).output == result.output)
        #expect(pkgtool("ls", "-z", "--json", root).status == .trouble)
    }

    @Test("paths given on the command line are quoted in hash and manifest; errors escape controls")
    func commandLinePaths() throws {
        let directory = try TemporaryDirectory("inject-args")
        let file = directory.url("x\u{1B}]0;title\u{07}")
        try Files.write(file, "content")
        let hash = pkgtool("hash", file)
        #expect(hash.output == "\(ContentHash.of(Array("content".utf8)))  \(NameQuoting.quoted(file))\n")
        #expect(!hasRawControls(hash.output))
        let package = directory.url("p\u{1B}kg")
        try Files.makeDirectory(package)
        let manifest = pkgtool("manifest", package)
        #expect(manifest.output.contains("  \"\(directory.path)/p\\033kg\"  (0 entries)"))
        let missing = try runProgram(pkgtoolExecutable(), ["hash", directory.url("gone\n\u{1B}[2J")])
        #expect(missing.status == 2)
        #expect(missing.error == "pkgtool: cannot stat '\(directory.path)/gone\\n\\033[2J': No such file or directory (ENOENT from fstatat)\n")
    }

    @Test("JSON escapes every control character, DEL and C1 included")
    func jsonEscapes() {
        let value = JSON.string("a\u{0}\u{1B}\u{7F}\u{9B}\"\\\n\té")
        #expect(value.serialized() == #""a\u0000\u001b\u007f\u009b\"\\\n\té""#)
    }
}

/// Every string anywhere in a parsed JSON value.
private func jsonStrings(_ value: Any) -> Set<String> {
    switch value {
    case let text as String: return [text]
    case let array as [Any]: return array.reduce(into: Set()) { $0.formUnion(jsonStrings($1)) }
    case let object as [String: Any]: return object.values.reduce(into: Set()) { $0.formUnion(jsonStrings($1)) }
    default: return []
    }
}
