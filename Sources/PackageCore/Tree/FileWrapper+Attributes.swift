import FoundationEssentials

extension FileWrapper {
    /// The node's attributes, keyed by `FileAttributeKey` raw values as Apple's are.
    ///
    /// Reading gives `.posixPermissions` (Int), `.modificationDate` (Date, when known),
    /// `.type` and, for regular files, `.size`. Setting honours `.posixPermissions` and
    /// `.modificationDate` (the attributes a write restores) and ignores other keys; a
    /// permission change that flips the owner-execute bit changes the Merkle hashes above.
    public var fileAttributes: [String: Any] {
        get {
            let (kind, permissions, modificationTime, size) = state.withLock {
                ($0.kind, $0.effectivePermissions, $0.modificationTime, $0.regularFileSize)
            }
            var attributes: [String: Any] = [
                FileAttributeKey.posixPermissions.rawValue: Int(permissions),
                FileAttributeKey.type.rawValue: FileWrapper.attributeType(of: kind).rawValue,
            ]
            if let modificationTime {
                attributes[FileAttributeKey.modificationDate.rawValue] = FileWrapper.date(fromNanoseconds: modificationTime)
            }
            if kind == .regular { attributes[FileAttributeKey.size.rawValue] = Int(size) }
            return attributes
        }
        set {
            if let value = newValue[FileAttributeKey.posixPermissions.rawValue],
                let bits = FileWrapper.permissionBits(from: value)
            {
                setPermissions(bits)
            }
            if let date = newValue[FileAttributeKey.modificationDate.rawValue] as? Date {
                let nanoseconds = FileWrapper.nanoseconds(from: date)
                state.withLock { $0.modificationTime = nanoseconds }
                markEdited()
            }
        }
    }

    /// Sets the permission bits, forgetting the hashes above when the executable bit flips.
    func setPermissions(_ bits: UInt32) {
        let tagChanged = state.withLock { node -> Bool in
            let before = node.entryTag
            node.permissions = bits & 0o7777
            return node.entryTag != before
        }
        if tagChanged { invalidateAncestorHashes() }
        markEdited()
    }

    private static func attributeType(of kind: FileKind) -> FileAttributeType {
        switch kind {
        case .directory: return .typeDirectory
        case .symbolicLink: return .typeSymbolicLink
        default: return .typeRegular
        }
    }

    static func permissionBits(from value: Any) -> UInt32? {
        // Any integer type (Foundation hands out Int, NSNumber-bridged Int16, or mode_t).
        guard let number = value as? any BinaryInteger else { return nil }
        return UInt32(truncatingIfNeeded: number) & 0o7777
    }

    static func date(fromNanoseconds nanoseconds: Int64) -> Date {
        let seconds = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        return Date(timeIntervalSince1970: Double(seconds.quotient) + Double(seconds.remainder) / 1_000_000_000)
    }

    /// Nanoseconds since the epoch, rounded to the microsecond a `Date` (a Double) can hold;
    /// dates beyond what a file time holds here (1677–2262: `Date.distantFuture`,
    /// `distantPast`) saturate at the nearest end, and a NaN date is the epoch.
    static func nanoseconds(from date: Date) -> Int64 {
        let microseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard !microseconds.isNaN else { return 0 }
        guard let whole = Int64(exactly: max(min(microseconds, 9.2e15), -9.2e15)) else { return 0 }
        let (product, overflow) = whole.multipliedReportingOverflow(by: 1000)
        return overflow ? (whole < 0 ? .min : .max) : product
    }
}
