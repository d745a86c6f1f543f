/// The compare-and-swap a push relies on, checked where it relies on it (Specs/remote.md,
/// "Compare-and-swap"): a store that ignores `If-None-Match` or `If-Match` (moto 4.2 answers
/// 200 to both; a proxy may drop the headers) would let two pushes overwrite each other's
/// head and lose a version without a word.
enum ConditionalWrites {
    /// The ETag no object has: an `If-Match` on it must fail.
    static let impossibleETag = "\"00000000000000000000000000000000\""

    /// Checks, just before a push writes anything a version depends on, that the store
    /// refuses conditional PUTs whose condition does not hold: a new probe object is
    /// created with `If-None-Match: *`, which must then fail (412) a second time, as must
    /// an `If-Match` on an ETag it does not have. The probe is removed on every path
    /// (checked, refused, failed, cancelled).
    /// - Throws: `unsupportedStore` naming the endpoint when a condition was ignored.
    /// - Complexity: three PUTs of one byte and one DELETE.
    static func probe(_ store: RemoteStore, _ connection: S3Connection) throws(RemoteError) {
        let location = store.location
        let key = RemoteLayout.probe(location, token: UInt64.random(in: 0...UInt64.max))
        defer { removeProbe(key, store) }
        let created = try connection.put(bucket: location.bucket, key: key, bytes: [1], condition: .absent)
        let again = try connection.put(bucket: location.bucket, key: key, bytes: [2], condition: .absent)
        let stale = try connection.put(
            bucket: location.bucket, key: key, bytes: [3], condition: .matching(etag: impossibleETag))
        var ignored: [String] = []
        if created == .preconditionFailed { ignored.append("refused to create a new object with If-None-Match") }
        if again != .preconditionFailed { ignored.append("If-None-Match") }
        if stale != .preconditionFailed { ignored.append("If-Match") }
        guard ignored.isEmpty else {
            throw RemoteError(
                .unsupportedStore,
                "\(store.configuration.endpoint) ignores conditional writes (\(ignored.joined(separator: ", "))): "
                    + "two pushes could overwrite each other's versions there, so pkgtool will not push to \(location)")
        }
    }

    /// Deletes a probe on a connection of its own that a cancellation does not stop, with
    /// one attempt: a push that failed because the store is gone does not wait for it again.
    private static func removeProbe(_ key: String, _ store: RemoteStore) {
        var configuration = store.configuration
        configuration.transport.attempts = 2
        let cleanup = S3Connection(configuration: configuration, counters: store.counters, cancellation: nil)
        try? cleanup.delete(bucket: store.location.bucket, key: key)
    }

    /// Reads `HEAD` back after this push replaced it and checks that `version` is in the
    /// history it records: the head itself, or an ancestor (another push built on it since).
    /// On a store that honours conditions this always holds; when it does not, the push
    /// must not report a version that is not there.
    /// - Throws: `unsupportedStore` naming the endpoint and what HEAD holds instead.
    /// - Complexity: one GET of `HEAD`.
    static func confirmHead(
        holding version: VersionSummary, written bytes: [UInt8], _ store: RemoteStore, _ connection: S3Connection
    ) throws(RemoteError) {
        let location = store.location
        let now = try connection.getObject(bucket: location.bucket, key: RemoteLayout.head(location), limit: 4 << 20)
        if now?.bytes == bytes { return }
        let record = try now.flatMap { (object) throws(RemoteError) in try HeadRecord.decode(object.bytes, location: location) }
        if let record, record.contains(version.id) { return }
        let holds = record.map { "it is at \(PushOperation.describe($0.head))" } ?? (now == nil ? "it has no HEAD" : "its HEAD is not pkgtool's")
        throw RemoteError(
            .unsupportedStore,
            "\(store.configuration.endpoint) did not keep the HEAD this push wrote to \(location): \(holds), which does not "
                + "hold version \(version.sequence) (\(version.shortID)); the store or a proxy before it does not honour "
                + "conditional writes, and another push overwrote this one: version \(version.sequence) is not in the "
                + "history. Push to a store that honours If-Match and If-None-Match")
    }
}

extension HeadRecord {
    /// Whether `id` is the head or one of the ancestors the record holds.
    func contains(_ id: SHA256Digest) -> Bool {
        head.id == id || history.contains { $0.id == id }
    }
}
