import PackageCore
import PackageZip

/// The ZIP side of `verify` and `ls`: `VerifyCommand` and `ListCommand` hand a path here
/// when it is a ZIP archive (`ZipArchive.looksLikeArchive`), directories stay theirs.
enum ZipVerify {
    /// Structure, every CRC-32 and content hash; one `ok` line or JSON object.
    static func run(_ path: String, arguments: ParsedArguments, usageLine: String, console: Console) throws -> ExitStatus {
        let workers = try arguments.integer("jobs", in: 1...1024, default: ProcessInfoCores.active, usageLine: usageLine)
        let limits = try ZipCommandSupport.limits(arguments, usageLine: usageLine)
        let (archive, report) = try ProgressMeter.showing("verifying", console: console, arguments: arguments) { meter in
            try ZipCommandSupport.verifyArchive(path, limits: limits, workers: workers, meter: meter)
        }
        if arguments.flag("json") {
            console.line(
                JSON.object([
                    ("path", .string(path)), ("kind", .string("archive")), ("ok", .bool(true)),
                    ("entries", .int(report.entries)), ("bytes", .int(report.bytes)), ("problems", .array([])),
                    ("hashes_checked", .int(report.hashesChecked)), ("zip64", .bool(archive.isZip64)),
                ]).serialized(pretty: true))
        } else {
            console.line(
                "ok: \(NameQuoting.quoted(path)): \(report.entries) entries (\(report.bytes) bytes), every CRC-32 and \(report.hashesChecked) content hashes checked")
        }
        return .success
    }
}

enum ZipList {
    /// One line per entry in archive order, in `ls`'s columns for packages: kind (d, f, x,
    /// l), with --long the mode, then the size, with --long the compressed size, method,
    /// CRC-32, modification time and content hash, then the name.
    static func run(_ path: String, arguments: ParsedArguments, usageLine: String, console: Console) throws -> ExitStatus {
        let limits = try ZipCommandSupport.limits(arguments, usageLine: usageLine)
        let archive = try ZipArchive.open(path, limits: limits)
        let long = arguments.flag("long")
        if arguments.flag("json") {
            let records: [JSON] = archive.entries.map { entry in
                var members: [(String, JSON)] = [
                    ("path", .string(entry.path)), ("kind", .string(ListCommand.kindName(entry.kind))),
                    ("mode", .string(ListCommand.format4(entry.permissions))),
                ]
                if entry.kind != .directory { members.append(("size", .int(entry.uncompressedSize))) }
                members += [
                    ("compressed_size", .int(entry.compressedSize)), ("method", .string(entry.method.description)),
                    ("crc32", .string(hex8(entry.crc32))),
                    ("mtime", .string(Timestamps.iso8601(nanoseconds: entry.modificationTime))),
                    ("hash", entry.contentHash.map { .string($0.description) } ?? .null),
                ]
                if let target = entry.linkTarget { members.append(("target", .string(target))) }
                return .object(members)
            }
            console.line(JSON.array(records).serialized(pretty: true))
            return .success
        }
        let sizeWidth = archive.entries.map { String($0.uncompressedSize).count }.max() ?? 1
        let packedWidth = archive.entries.map { String($0.compressedSize).count }.max() ?? 1
        for entry in archive.entries {
            var columns = [String(entry.snapshotEntry().tag.rawValue.asCharacter)]
            if long { columns.append(ListCommand.format4(entry.permissions)) }
            let size = entry.kind == .directory ? "-" : String(entry.uncompressedSize)
            columns.append(String(repeating: " ", count: sizeWidth - size.count) + size)
            if long {
                let packed = String(entry.compressedSize)
                columns.append(String(repeating: " ", count: packedWidth - packed.count) + packed)
                columns.append(entry.method == .deflated ? "deflated" : "stored  ")
                columns.append(hex8(entry.crc32))
                columns.append(Timestamps.iso8601(nanoseconds: entry.modificationTime))
                columns.append(entry.contentHash?.description ?? String(repeating: "-", count: 32))
            }
            ListCommand.writeRecord(
                columns: columns, name: entry.name, linkTarget: entry.linkTarget,
                nullTerminated: arguments.flag("null"), console: console)
        }
        return .success
    }

    static func hex8(_ value: UInt32) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }
}
