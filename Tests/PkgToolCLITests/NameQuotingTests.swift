import Foundation
import PackageCore
import PackageTestSupport
import Testing
@testable import PkgToolCLI

/// Names that must be quoted, and some that must not.
let hostileNames: [String] = [
    "evil\nM\tfake.txt",
    "tab\there",
    "quote\"d",
    "back\\slash",
    "bell\u{07}back\u{08}feed\u{0C}cr\rvt\u{0B}",
    "escape\u{1B}[31mred\u{1B}[0m",
    "del\u{7F}",
    "nul-free\u{01}\u{1F}",
]
let plainNames: [String] = ["plain.txt", "caf\u{E9} \u{65E5}\u{672C} \u{1F600}.txt", "with space", "it's", "dash-and_under"]

@Suite("Names quoted as git quotes them")
struct NameQuotingTests {
    @Test func escapes() {
        #expect(NameQuoting.quoted("plain.txt") == "plain.txt")
        #expect(NameQuoting.quoted("evil\nM\tfake.txt") == #""evil\nM\tfake.txt""#)
        #expect(NameQuoting.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(NameQuoting.quoted("\u{07}\u{08}\u{0B}\u{0C}\r") == #""\a\b\v\f\r""#)
        #expect(NameQuoting.quoted("x\u{1B}[0m") == #""x\033[0m""#)
        #expect(NameQuoting.quoted("\u{7F}\u{01}") == #""\177\001""#)
        // C1 controls: each UTF-8 byte in octal, unlike git with core.quotePath=false.
        #expect(NameQuoting.quoted("csi\u{9B}31m") == #""csi\302\23331m""#)
        // Other non-ASCII text is printed as it is.
        #expect(NameQuoting.quoted("caf\u{E9}") == "caf\u{E9}")
    }

    @Test func messagesKeepTheirQuotesButLoseTheirControls() {
        let message = "cannot open 'a\nb\u{1B}[2J\"c\\d': gone"
        #expect(NameQuoting.escapingControlCharacters(message) == #"cannot open 'a\nb\033[2J"c\d': gone"#)
    }

    @Test("the same quoting as git -c core.quotePath=false, byte for byte")
    func sameAsGit() throws {
        let git = try #require(which("git"), "git is installed by Scripts/dependencies.sh")
        let directory = try TemporaryDirectory("quote-git")
        let repository = directory.url("repo")
        try Files.makeDirectory(repository)
        #expect(try runProgram(git, ["init", "-q", repository]).status == 0)
        for name in hostileNames + plainNames { try Files.write(repository + "/" + name, "x") }
        let listed = try runProgram(
            git, ["-C", repository, "-c", "core.quotePath=false", "ls-files", "--others"])
        #expect(listed.status == 0)
        let gitLines = Set(listed.output.split(separator: "\n").map(String.init))
        let ours = Set((hostileNames + plainNames).map(NameQuoting.quoted))
        #expect(gitLines == ours)
    }
}
