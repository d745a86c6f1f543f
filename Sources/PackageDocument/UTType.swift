import Foundation

/// A uniform type identifier: what kind of content a file or package holds.
///
/// A small stand-in for UniformTypeIdentifiers, which Linux lacks: an identifier, the
/// identifiers it conforms to (transitively), and a preferred filename extension. There is
/// no system registry and no Info.plist, so a custom type declares its parent in code
/// (`conformingTo:`); a package type conforms to `.package`, a flat file to `.data`.
/// Two types are equal when their identifiers are.
public struct UTType: Hashable, Sendable, CustomStringConvertible {
    /// The reverse-DNS identifier, such as "public.plain-text".
    public let identifier: String
    /// Every identifier this type conforms to, itself excluded, parents of parents included.
    public let supertypeIdentifiers: Set<String>
    /// The extension a file of this type usually has ("txt"), without the dot.
    public let preferredFilenameExtension: String?
    /// Whether this process declares the type (`exportedAs:`) rather than borrowing a type
    /// another application owns (`importedAs:`) or using a built-in one.
    public let isDeclared: Bool
    /// Whether the type says what kind of item it is — a flat file or a package (a folder):
    /// true for the built-in types and for a type given its parent in code (`conformingTo:`);
    /// false for `UTType(exportedAs:)` / `UTType(importedAs:)` without one, as the guide
    /// declares its notebook. On Apple platforms the app's Info.plist would say; here the
    /// document host learns it from the item it opens and from what the writer writes
    /// (Specs/document.md, "Packages and flat files").
    public let declaresKind: Bool

    init(
        builtIn identifier: String, conformingTo parents: [UTType], filenameExtension: String? = nil,
        isDeclared: Bool = false, declaresKind: Bool = true
    ) {
        self.identifier = identifier
        var supertypes: Set<String> = []
        for parent in parents { supertypes.formUnion(parent.supertypeIdentifiers.union([parent.identifier])) }
        supertypeIdentifiers = supertypes
        preferredFilenameExtension = filenameExtension
        self.isDeclared = isDeclared
        self.declaresKind = declaresKind
    }

    /// A type this application owns, such as "com.mycompany.notebook", of the kind its parent
    /// says: `.package` for a directory shown as one document, `.data` (or a descendant such
    /// as `.text`) for a flat file.
    ///
    /// - Parameters:
    ///   - identifier: the reverse-DNS identifier.
    ///   - parentType: the type it conforms to, which says whether it is a package.
    ///   - filenameExtension: the extension its files usually have, without the dot.
    public init(exportedAs identifier: String, conformingTo parentType: UTType, filenameExtension: String? = nil) {
        self.init(
            builtIn: identifier, conformingTo: [parentType], filenameExtension: filenameExtension, isDeclared: true)
    }

    /// A type this application owns, declared as the guide does: `UTType(exportedAs:
    /// "com.mycompany.notebook")`.
    ///
    /// On Apple platforms its conformance comes from the app's Info.plist. Here it conforms
    /// to `.data`, as Apple's default parent says, but does not declare its kind
    /// (`declaresKind` is false): a document of this type opened from a folder is a package,
    /// and a new one is whatever its `FileWrapperDocumentWriter` writes.
    ///
    /// - Parameters:
    ///   - identifier: the reverse-DNS identifier.
    ///   - filenameExtension: the extension its files usually have, without the dot.
    public init(exportedAs identifier: String, filenameExtension: String? = nil) {
        self.init(
            builtIn: identifier, conformingTo: [.data], filenameExtension: filenameExtension, isDeclared: true,
            declaresKind: false)
    }

    /// A type another application owns, which this one reads or writes, of the kind its
    /// parent says.
    ///
    /// - Parameters:
    ///   - identifier: the reverse-DNS identifier.
    ///   - parentType: the type it conforms to, which says whether it is a package.
    ///   - filenameExtension: the extension its files usually have, without the dot.
    public init(importedAs identifier: String, conformingTo parentType: UTType, filenameExtension: String? = nil) {
        self.init(builtIn: identifier, conformingTo: [parentType], filenameExtension: filenameExtension)
    }

    /// A type another application owns, without its parent: it conforms to `.data` and does
    /// not declare its kind, like `init(exportedAs:filenameExtension:)`.
    ///
    /// - Parameters:
    ///   - identifier: the reverse-DNS identifier.
    ///   - filenameExtension: the extension its files usually have, without the dot.
    public init(importedAs identifier: String, filenameExtension: String? = nil) {
        self.init(builtIn: identifier, conformingTo: [.data], filenameExtension: filenameExtension, declaresKind: false)
    }

    /// The built-in type with `identifier`, or nil (there is no registry of other types).
    public init?(_ identifier: String) {
        guard let found = UTType.builtIns.first(where: { $0.identifier == identifier }) else { return nil }
        self = found
    }

    /// The built-in type whose preferred extension is `filenameExtension` and which conforms
    /// to `supertype`, or nil.
    public init?(filenameExtension: String, conformingTo supertype: UTType = .data) {
        let wanted = filenameExtension.lowercased()
        let aliases = ["jpg": "jpeg", "text": "txt", "m4v": "mp4"]
        let canonical = aliases[wanted] ?? wanted
        guard
            let found = UTType.builtIns.first(where: {
                $0.preferredFilenameExtension == canonical && $0.conforms(to: supertype)
            })
        else { return nil }
        self = found
    }

    /// Whether this type is `type` or descends from it.
    public func conforms(to type: UTType) -> Bool {
        type.identifier == identifier || supertypeIdentifiers.contains(type.identifier)
    }

    /// Whether this type is a strict descendant of `type`.
    public func isSubtype(of type: UTType) -> Bool { supertypeIdentifiers.contains(type.identifier) }

    /// Whether this type is an ancestor of `type`.
    public func isSupertype(of type: UTType) -> Bool { type.isSubtype(of: self) }

    /// Whether documents of this type are directories shown as one item.
    public var isPackage: Bool { conforms(to: .package) }

    /// The identifier.
    public var description: String { identifier }

    /// Types are equal when their identifiers are.
    public static func == (lhs: UTType, rhs: UTType) -> Bool { lhs.identifier == rhs.identifier }
    /// Hashes the identifier.
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}
