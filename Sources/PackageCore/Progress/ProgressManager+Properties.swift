extension ProgressManager {
    /// Bytes this manager's work covers, for display (SF-0023's `totalByteCount`).
    /// Set directly, or inside `withProperties` to change several values at once.
    public var totalByteCount: UInt64 {
        get { read { $0.nodes[identifier]?.counts.totalByteCount ?? 0 } }
        set { update { $0.counts.totalByteCount = newValue } }
    }

    /// Bytes done, for display. `completedByteCount += n` reads then writes: from several
    /// threads at once, use `withProperties { $0.completedByteCount += n }`.
    public var completedByteCount: UInt64 {
        get { read { $0.nodes[identifier]?.counts.completedByteCount ?? 0 } }
        set { update { $0.counts.completedByteCount = newValue } }
    }

    /// Files this manager's work covers, for display.
    public var totalFileCount: Int {
        get { read { $0.nodes[identifier]?.counts.totalFileCount ?? 0 } }
        set { update { $0.counts.totalFileCount = newValue } }
    }

    /// Files done, for display.
    public var completedFileCount: Int {
        get { read { $0.nodes[identifier]?.counts.completedFileCount ?? 0 } }
        set { update { $0.counts.completedFileCount = newValue } }
    }

    /// This manager's values, changed together in `withProperties`.
    public struct Values: Sendable {
        /// Units of work in all; nil while the total is unknown (indeterminate).
        public var totalCount: Int?
        /// Units done.
        public var completedCount: Int
        /// Bytes to process, for display.
        public var totalByteCount: UInt64
        /// Bytes processed, for display.
        public var completedByteCount: UInt64
        /// Files to process, for display.
        public var totalFileCount: Int
        /// Files processed, for display.
        public var completedFileCount: Int
    }

    /// Reads and changes this manager's values in one step, atomically with respect to
    /// other threads (SF-0023's `withProperties`). The closure runs under the tree's lock:
    /// it must not touch any progress manager of the same tree.
    public func withProperties<T: Sendable, E: Error>(_ body: (inout Values) throws(E) -> T) throws(E) -> T {
        var result: Result<T, E>!
        tree.state.withLock { state in
            guard let node = state.nodes[identifier] else { return }
            var values = Values(
                totalCount: node.totalCount, completedCount: node.completedCount,
                totalByteCount: node.counts.totalByteCount, completedByteCount: node.counts.completedByteCount,
                totalFileCount: node.counts.totalFileCount, completedFileCount: node.counts.completedFileCount)
            do throws(E) {
                result = .success(try body(&values))
            } catch {
                result = .failure(error)
                return
            }
            state.nodes[identifier]!.totalCount = values.totalCount
            state.nodes[identifier]!.completedCount = values.completedCount
            state.nodes[identifier]!.counts = ProgressCounts(
                totalByteCount: values.totalByteCount, completedByteCount: values.completedByteCount,
                totalFileCount: values.totalFileCount, completedFileCount: values.completedFileCount)
            state.foldFinished(from: identifier)
        }
        notify(from: identifier, includingSelf: true)
        return try result.get()
    }

    /// Names of the values `summary(of:)` adds up over a subtree (SF-0023's properties).
    public enum Properties {
        /// Names `totalByteCount` for `summary(of:)`.
        public enum TotalByteCount {}
        /// Names `completedByteCount` for `summary(of:)`.
        public enum CompletedByteCount {}
        /// Names `totalFileCount` for `summary(of:)`.
        public enum TotalFileCount {}
        /// Names `completedFileCount` for `summary(of:)`.
        public enum CompletedFileCount {}
    }

    /// The total bytes of this manager and every manager below it, finished ones included.
    public func summary(of property: Properties.TotalByteCount.Type) -> UInt64 {
        read { $0.summary(of: identifier).totalByteCount }
    }

    /// The completed bytes of this manager and every manager below it.
    public func summary(of property: Properties.CompletedByteCount.Type) -> UInt64 {
        read { $0.summary(of: identifier).completedByteCount }
    }

    /// The total files of this manager and every manager below it.
    public func summary(of property: Properties.TotalFileCount.Type) -> Int {
        read { $0.summary(of: identifier).totalFileCount }
    }

    /// The completed files of this manager and every manager below it.
    public func summary(of property: Properties.CompletedFileCount.Type) -> Int {
        read { $0.summary(of: identifier).completedFileCount }
    }
}
