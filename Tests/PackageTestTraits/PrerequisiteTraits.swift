import PackageTestSupport
import Testing

/// The traits and checks of `Prerequisite`, for test targets only (the benchmark shares
/// PackageTestSupport and does not link Swift Testing).
extension Prerequisite {
    /// The trait of a test that needs `available`: a visible skip saying `what` where it is
    /// missing, run (and failing on its `#require`) in CI.
    public static func needs(_ available: Bool, _ what: String) -> ConditionTrait {
        .enabled(if: runs(available), Comment(rawValue: "needs " + what))
    }

    /// The trait of a test that runs these programs: a visible skip naming the missing ones
    /// where any is not on PATH, run (and failing on its `#require`) in CI.
    public static func programs(_ names: String...) -> ConditionTrait {
        let missing = names.filter { which($0) == nil }
        return .enabled(if: runs(missing.isEmpty), Comment(rawValue: "needs " + missing.joined(separator: ", ") + " on PATH"))
    }

    /// The path of `program` on PATH; fails the test (rather than passing it) when it is not
    /// there — which a test reaches only in CI, its trait having skipped it elsewhere.
    public static func program(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(which(name), "\(name) is not on PATH", sourceLocation: sourceLocation)
    }
}
