import Foundation
import Testing

/// The long versions of tests whose default run keeps a few rounds (a writer racing saves
/// for 100 rounds…): they only spin longer, so `swift test` skips them, visibly, and
/// `Scripts/stress` (PKGTOOL_STRESS=1) runs them.
public enum Stress {
    /// Whether this run includes the stress loops.
    public static let enabled = ProcessInfo.processInfo.environment["PKGTOOL_STRESS"] == "1"

    /// The trait of a stress loop: a visible skip unless PKGTOOL_STRESS=1.
    public static var loop: ConditionTrait {
        .enabled(if: enabled, "a stress loop: runs with PKGTOOL_STRESS=1 (Scripts/stress)")
    }
}
