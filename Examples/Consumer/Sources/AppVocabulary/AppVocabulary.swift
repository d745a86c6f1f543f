// An app's own model layer, which happens to use names that pkgtool uses inside its engine.
// `import PackageDocument` must not bring those into the app's namespace: here (a module
// that imports PackageDocument and declares them) and in the executable (which imports
// this module and PackageDocument and uses them unqualified, NamespaceCheck.swift), each
// name means the app's type. Were PackageDocument to re-export all of PackageCore, the
// executable's uses would be ambiguous and the consumer would not compile.
import Foundation
import PackageDocument

/// One change the app's sync layer sends to its server.
public struct TreeChange: Equatable, Sendable {
    public var page: String
    public var text: String
    public init(page: String, text: String) {
        self.page = page
        self.text = text
    }
}

/// The app's view of where documents live.
public enum FileSystem {
    public static let documentsFolder = "Documents"
    /// The app's own helper, next to the document API's FileWrapper.
    public static func pageNames(of wrapper: FileWrapper) -> [String] {
        (wrapper.fileWrappers ?? [:]).keys.sorted()
    }
}

/// An app's handle on an open file (as in swift-system, which an app may well import).
public struct FileDescriptor: Sendable {
    public var number: Int32
    public init(number: Int32) { self.number = number }
}

/// An app's error code (as in swift-system).
public struct Errno: Error, Equatable, Sendable {
    public var code: Int32
    public init(code: Int32) { self.code = code }
}

/// An app's own job queue.
public struct WorkQueue: Sendable {
    public var jobs: [String]
    public init(jobs: [String]) { self.jobs = jobs }
}

/// An app's own binary reader.
public struct ByteReader: Sendable {
    public var bytes: [UInt8]
    public init(bytes: [UInt8]) { self.bytes = bytes }
}

/// The same module uses its names unqualified next to `import PackageDocument`.
public func describeChanges(_ changes: [TreeChange], in folder: FileWrapper) -> String {
    let queue = WorkQueue(jobs: changes.map(\.page))
    let reader = ByteReader(bytes: Array(FileSystem.documentsFolder.utf8))
    return "\(queue.jobs.count) changes to \(FileSystem.pageNames(of: folder).count) pages (\(reader.bytes.count))"
}
