import PackageCore

/// One content's record in `ContentRecords`: its key and where its blobs are.
protocol ContentRecord: Sendable {
    var key: FileKey { get }
    var firstBlob: UInt32 { get set }
    var blobCount: UInt32 { get set }
}

/// The contents of a version as its manifest is decoded: one record a content, sorted by
/// content once complete, their blobs in one array. What a pull keeps of the files it
/// lacks (`WantedFiles`) and a push of its parent's contents (`ParentContents`), instead of
/// the version's entries (112 bytes each with their blob slices) or a hash table of keys.
struct ContentRecords<Record: ContentRecord>: Sendable {
    private(set) var records: [Record] = []
    private(set) var blobs: [BlobLocation] = []

    /// Adds `record` with its blobs (its blob fields are set here). A blob record takes
    /// dozens of a manifest body's bytes, whose size is bounded: the counts fit 32 bits.
    mutating func append(_ record: Record, blobs recordBlobs: some Sequence<BlobLocation>) {
        var record = record
        let first = blobs.count
        blobs.append(contentsOf: recordBlobs)
        record.firstBlob = UInt32(first)
        record.blobCount = UInt32(blobs.count - first)
        records.append(record)
    }

    /// Room for `count` records and as many blobs: the arrays are then not regrown while
    /// a manifest of that many entries is decoded (a regrowth holds two copies at once).
    mutating func reserve(_ count: Int) {
        records.reserveCapacity(count)
        blobs.reserveCapacity(count)
    }

    /// Sorts the records by content and keeps the first added of each content (Swift's
    /// sort is stable), handing `dropped` the key of each record left out.
    mutating func keepFirstOfEachContent(dropped: (FileKey) -> Void = { _ in }) {
        records.sort { $0.key < $1.key }
        var kept = 0
        for index in records.indices {
            if kept > 0, records[kept - 1].key == records[index].key {
                dropped(records[index].key)
            } else {
                records.swapAt(kept, index)
                kept += 1
            }
        }
        records.removeSubrange(kept...)
    }

    /// The position of `key`'s record, nil when there is none.
    /// - Complexity: O(log n), by binary search.
    func position(of key: FileKey) -> Int? {
        var low = 0
        var high = records.count
        while low < high {
            let middle = (low + high) / 2
            let found = records[middle].key
            if found == key { return middle }
            if found < key { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The blobs of the record at `position`, in order.
    func blobs(at position: Int) -> ArraySlice<BlobLocation> {
        let record = records[position]
        return blobs[Int(record.firstBlob)..<Int(record.firstBlob + record.blobCount)]
    }
}

/// A sink of a streamed version that keeps only the files handed to it
/// (`VersionManifest.FileHandoff`): directories and links pass by.
protocol VersionFileSink: TreeEntrySink {}

extension VersionFileSink {
    mutating func enter(_ entry: SnapshotEntry) {}
    mutating func finishDirectory(hash: ContentHash) {}
}
