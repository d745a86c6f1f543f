import Foundation
import PackageTestSupport
import Synchronization
@testable import PackageDocument

/// Counts the I/O steps taken, by kind (and reads by path), so a test can assert what a
/// document operation did not touch.
final class IOCounter: IOFaultInjector {
    private let counts = Mutex<[IOStep: Int]>([:])
    private let readPaths = Mutex<[String]>([])
    func fault(before step: IOStep, path: String) -> InjectedFault? {
        counts.withLock { $0[step, default: 0] += 1 }
        if step == .read { readPaths.withLock { $0.append(path) } }
        return nil
    }
    func count(_ step: IOStep) -> Int { counts.withLock { $0[step, default: 0] } }
    var pathsRead: [String] { readPaths.withLock { $0 } }
}

/// The names in a directory, sorted, without the coordinator's lock files.
func visibleNames(in path: String) throws -> [String] {
    try DirectoryListing.names(in: FileDescriptor.openDirectory(path))
        .filter { !$0.hasSuffix(".pkgtool-lock") }
        .sorted()
}

func fileURL(_ path: String) -> URL { URL(fileURLWithPath: path) }

func text(at path: String) throws -> String { String(decoding: try Files.read(path), as: UTF8.self) }
