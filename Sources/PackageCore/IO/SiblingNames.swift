/// The hidden names pkgtool gives what it keeps beside a file or package of its own:
/// staging trees and files, new files about to be renamed, a version set aside, a kept
/// previous version.
///
/// Every such name is `.<prefix>.<hash>.pkgtool-<role>[-<random>]`: the first bytes of the
/// target's name (for a person listing the folder), twelve hex digits of the XXH3 of the
/// whole name (so two long names that share a prefix never share siblings), and the role.
/// Its length is bounded (under 100 bytes) whatever the target's name, so any name the
/// file system accepts can be saved (Specs/save.md, "Names beside the package").
package struct SiblingNames: Sendable, Hashable {
    /// Everything up to and including `.pkgtool-`.
    package let stem: String
    /// The target's own name.
    package let targetName: String

    /// The most bytes of the target's name that appear in its siblings' names.
    static let readablePrefixBytes = 48

    package init(forName name: String) {
        targetName = name
        var prefix = ""
        var count = 0
        for scalar in name.unicodeScalars {
            let width = String(scalar).utf8.count
            if count + width > Self.readablePrefixBytes { break }
            prefix.unicodeScalars.append(scalar)
            count += width
        }
        let hash = ContentHash.of(Array(name.utf8)).description.prefix(12)
        stem = "." + prefix + "." + hash + ".pkgtool-"
    }

    /// The previous version an atomic save keeps when asked (not a leftover).
    package var previous: String { stem + "previous" }
    /// A fresh staging name: a tree or file being built to replace the target.
    package func newStaging() -> String { stem + Role.staging.rawValue + "-" + Self.randomSuffix() }
    /// A fresh name for a new file, named only for the instant before its rename over the
    /// target (`StagedReplacement.writeFile`), and for a second link held while a file is
    /// swapped without exchange (`pack --keep-previous`). Not a role recovery sweeps: such
    /// a file holds no liveness lock, so a sweep could not tell a live one from litter.
    package func newTemporary() -> String { stem + "tmp-" + Self.randomSuffix() }
    /// A fresh name for the target set aside while the staging tree moves in (where the file
    /// system cannot exchange two names).
    package func newAside() -> String { stem + Role.aside.rawValue + "-" + Self.randomSuffix() }

    /// The roles of the temporary siblings, the names recovery looks for.
    package enum Role: String, Sendable, CaseIterable {
        case staging, aside = "old"
    }

    /// The role of `name` when it is a temporary sibling of this target, in the current
    /// scheme or the one before it (`.NAME.pkgtool-staging-…`, still recognised so that a
    /// crash of an older pkgtool is cleaned up too).
    package func role(of name: String) -> Role? {
        for role in Role.allCases {
            if PathOrder.hasBytePrefix(name, stem + role.rawValue + "-") { return role }
            if PathOrder.hasBytePrefix(name, "." + targetName + ".pkgtool-" + role.rawValue + "-") { return role }
        }
        return nil
    }

    /// A previous version kept under the older naming scheme (`.NAME.pkgtool-previous`).
    package var legacyPrevious: String { "." + targetName + ".pkgtool-previous" }

    static func randomSuffix() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}
