import PackageTestSupport
import Testing

/// CI's machine (`CI=true`, provisioned by `Scripts/dependencies.sh`) has everything the
/// tests need: there, no test may be skipped for want of a program, root or a mount, and
/// this one names at once whatever is missing.
@Suite("Prerequisites")
struct PrerequisiteTests {
    @Test("in CI, every prerequisite of the tests is present", .enabled(if: Prerequisite.inCI, "runs in CI only (CI=true)"))
    func everyPrerequisiteInCI() {
        let missing = Prerequisite.missing
        #expect(missing.isEmpty, "missing in CI: \(missing.joined(separator: ", "))")
    }
}
