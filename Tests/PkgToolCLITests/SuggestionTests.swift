import PackageTestSupport
import Testing

@testable import PkgToolCLI

/// "Did you mean …?": a mistyped command or option names the one that was probably meant,
/// as git does (`git sav` → `save`? no: `stash`…); nothing when no word is close.
@Suite("Did you mean")
struct SuggestionTests {
    @Test func closeWordsAndAbbreviationsAreSuggested() {
        let commands = ["hash", "ls", "diff", "verify", "manifest", "save", "pack", "unpack", "push", "pull", "log"]
        #expect(Suggestions.closest(to: "sav", among: commands) == "save")
        #expect(Suggestions.closest(to: "svae", among: commands) == "save")
        #expect(Suggestions.closest(to: "verfy", among: commands) == "verify")
        #expect(Suggestions.closest(to: "unpakc", among: commands) == "unpack")
        // Equally close to two: no guess.
        #expect(Suggestions.closest(to: "pul", among: ["pull", "push"]) == "pull")
        #expect(Suggestions.closest(to: "pu", among: ["pull", "push"]) == nil)
        #expect(Suggestions.closest(to: "zzzzzz", among: commands) == nil)
        #expect(Suggestions.distance(Array("ab".utf8), Array("ba".utf8)) == 1)
    }

    @Test func theCommandLineSaysWhatWasMeant() throws {
        let command = pkgtool("sav", "a", "b")
        #expect(command.status == .trouble)
        #expect(command.errors.first?.contains("unknown command 'sav'; did you mean 'save'?") == true, "\(command.errors)")
        let option = pkgtool("save", "--strategi", "full", "a", "b")
        #expect(option.status == .trouble)
        #expect(option.errors.first?.contains("did you mean '--strategy'?") == true, "\(option.errors)")
        let help = pkgtool("help", "verfy")
        #expect(help.errors.first?.contains("did you mean 'verify'?") == true, "\(help.errors)")
        // One concept, one spelling, the other kept as an alias: --stat and --stats both work.
        let directory = try TemporaryDirectory("aliases")
        try Files.makeDirectory(directory.url("src"))
        try Files.write(directory.url("src/a"), "a")
        #expect(pkgtool("save", "--stat", directory.url("src"), directory.url("pkg")).output.contains("written   "))
        #expect(pkgtool("diff", "--stats", directory.url("src"), directory.url("pkg")).output.hasPrefix("0 changes"))
        let nothing = pkgtool("frobnicate")
        #expect(nothing.errors.first?.contains("did you mean") == false, "\(nothing.errors)")
    }
}
