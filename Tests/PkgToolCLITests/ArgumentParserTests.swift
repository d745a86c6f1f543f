import PackageTestSupport
import Testing
@testable import PkgToolCLI

@Suite("Argument parsing")
struct ArgumentParserTests {
    let spec = CommandSpec(
        name: "demo", summary: "demo", arguments: "[options] A [B]",
        options: [
            OptionSpec("json", help: "json"),
            OptionSpec("level", short: "l", .value(placeholder: "N"), help: "level"),
            OptionSpec("verbose", short: "v", help: "verbose"),
            OptionSpec("exclude", .value(placeholder: "P"), help: "exclude", repeatable: true),
        ],
        positionals: 1...2)

    @Test func longShortAndBundled() throws {
        let parsed = try parseArguments(["--json", "-l", "3", "-v", "a", "--exclude=x", "--exclude", "y", "b"], spec: spec)
        #expect(parsed.positionals == ["a", "b"])
        #expect(parsed.flag("json"))
        #expect(parsed.flag("verbose"))
        #expect(parsed.value("level") == "3")
        #expect(parsed.allValues("exclude") == ["x", "y"])
        let bundled = try parseArguments(["-vl9", "a"], spec: spec)
        #expect(bundled.flag("verbose") && bundled.value("level") == "9")
        let inline = try parseArguments(["--level=7", "a"], spec: spec)
        #expect(try inline.integer("level", in: 0...9, default: 6, usageLine: "") == 7)
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parseArguments(["--", "--json", "-"], spec: spec)
        #expect(parsed.positionals == ["--json", "-"])
        #expect(!parsed.flag("json"))
    }

    @Test func rejectsUnknownAndMalformed() {
        #expect(throws: UsageError("unknown option '--frob' for 'demo'", usageLine: spec.usageLine)) {
            try parseArguments(["--frob", "a"], spec: spec)
        }
        #expect(throws: UsageError("unknown option '-q' for 'demo'", usageLine: spec.usageLine)) {
            try parseArguments(["-q", "a"], spec: spec)
        }
        #expect(throws: UsageError("option '--level' needs a value", usageLine: spec.usageLine)) {
            try parseArguments(["a", "--level"], spec: spec)
        }
        #expect(throws: UsageError("option '--json' takes no value", usageLine: spec.usageLine)) {
            try parseArguments(["--json=1", "a"], spec: spec)
        }
        #expect(throws: UsageError("'demo' needs 1 to 2 arguments, got 0", usageLine: spec.usageLine)) {
            try parseArguments([], spec: spec)
        }
        #expect(throws: UsageError("'demo' takes 1 to 2 arguments, got 3: unexpected 'c'", usageLine: spec.usageLine)) {
            try parseArguments(["a", "b", "c"], spec: spec)
        }
    }

    @Test func integerValidation() throws {
        let parsed = try parseArguments(["--level", "12", "a"], spec: spec)
        #expect(throws: UsageError.self) { try parsed.integer("level", in: 0...9, default: 6, usageLine: "u") }
        let missing = try parseArguments(["a"], spec: spec)
        #expect(try missing.integer("level", in: 0...9, default: 6, usageLine: "u") == 6)
    }

    @Test func helpSkipsPositionalCheck() throws {
        let parsed = try parseArguments(["--help"], spec: spec)
        #expect(parsed.helpRequested)
        #expect(spec.helpText.contains("-l, --level N"))
        #expect(spec.helpText.hasPrefix("usage: pkgtool demo [options] A [B]\n"))
    }
}

/// `push PKG [s3://…]` and `pull [s3://…] DEST`: the URL may be left out (the package
/// remembers its remote), never the package.
@Suite("Sync command operands")
struct SyncOperandTests {
    func parsed(_ spec: CommandSpec, _ arguments: [String]) throws -> ParsedArguments { try parseArguments(arguments, spec: spec) }

    @Test func pushTakesPackageThenOptionalURL() throws {
        let both = try PushCommand.operands(try parsed(PushCommand.spec, ["doc", "s3://bucket/p"]))
        #expect(both.package == "doc" && both.remote == "s3://bucket/p")
        let remembered = try PushCommand.operands(try parsed(PushCommand.spec, ["--force", "doc"]))
        #expect(remembered.package == "doc" && remembered.remote == nil)
        #expect(throws: UsageError.self) { try PushCommand.operands(try parsed(PushCommand.spec, ["s3://bucket/p"])) }
        #expect(throws: UsageError.self) { try parsed(PushCommand.spec, []) }
        #expect(throws: UsageError.self) { try parsed(PushCommand.spec, ["a", "b", "c"]) }
    }

    @Test func pullTakesOptionalURLThenDestination() throws {
        let both = try PullCommand.operands(try parsed(PullCommand.spec, ["s3://bucket/p", "doc"]))
        #expect(both.destination == "doc" && both.remote == "s3://bucket/p")
        let remembered = try PullCommand.operands(try parsed(PullCommand.spec, ["--version", "3", "doc"]))
        #expect(remembered.destination == "doc" && remembered.remote == nil)
        #expect {
            try PullCommand.operands(try parsed(PullCommand.spec, ["s3://bucket/p"]))
        } throws: { error in
            (error as? UsageError)?.message == "'pull' needs DEST after s3://bucket/p"
        }
    }

    @Test func helpManualAndCompletionShowTheURLAsOptional() {
        #expect(PushCommand.spec.usageLine.hasSuffix("PKG [s3://BUCKET/PREFIX]"))
        #expect(PullCommand.spec.usageLine.hasSuffix("[s3://BUCKET/PREFIX] DEST"))
        #expect(ManualPage.roff().contains("PKG [s3://BUCKET/PREFIX]"))
        #expect(PushCommand.spec.details.contains(".pkgtool/sync"))
    }
}
