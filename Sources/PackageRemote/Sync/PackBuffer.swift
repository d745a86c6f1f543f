import Dispatch
import Synchronization

/// One pack being filled, then uploaded, from memory: blobs are read from their files
/// straight into it, hashed in place, and sent from it.
///
/// A pack is the unit of memory of a push: the pool holds a few of them, so peak memory is
/// `buffers × capacity` whatever the package's size. Owned by one thread at a time (the
/// packer that fills it, then the transfer thread that sends it).
final class PackBuffer: RequestBody, @unchecked Sendable {
    // @unchecked: handed from the filling thread to the sending one through the workers'
    // queue (a lock), never used by two threads at once.
    let storage: UnsafeMutableRawBufferPointer
    private(set) var used = 0
    private(set) var blobs: [(digest: SHA256Digest, length: UInt32)] = []
    /// Unique per push: blobs placed in this pack refer to it until it has a name.
    var serial = 0
    private(set) var id: SHA256Digest?
    private var position = 0

    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 4096)
    }

    deinit { storage.deallocate() }

    var capacity: Int { storage.count }
    var free: Int { storage.count - used - PackFormat.trailerFixedSize - (blobs.count + 1) * PackFormat.trailerRecordSize }
    var isEmpty: Bool { blobs.isEmpty }

    /// Empties the buffer for a new pack.
    func reset(serial: Int) {
        used = 0
        blobs.removeAll(keepingCapacity: true)
        id = nil
        position = 0
        self.serial = serial
    }

    /// Where the next blob's bytes go: `count` bytes after the last blob.
    func tail(_ count: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: storage[used..<(used + count)])
    }

    /// Keeps the `length` bytes just written at the tail as a blob; returns its offset.
    func commit(_ digest: SHA256Digest, length: Int) -> UInt32 {
        let offset = used
        used += length
        blobs.append((digest, UInt32(length)))
        return UInt32(offset)
    }

    /// Appends the trailer and names the pack by the SHA-256 of its bytes.
    func seal() -> SHA256Digest {
        let trailer = PackFormat.trailer(blobs)
        trailer.withUnsafeBytes { storage.baseAddress!.advanced(by: used).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        used += trailer.count
        let digest = SHA256Digest.of(UnsafeRawBufferPointer(rebasing: storage[..<used]))
        id = digest
        return digest
    }

    // MARK: RequestBody

    var length: Int64 { Int64(used) }
    var failure: (any Error)? { nil }
    func rewind() { position = 0 }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let count = min(buffer.count, used - position)
        guard count > 0 else { return 0 }
        buffer.baseAddress!.copyMemory(from: storage.baseAddress! + position, byteCount: count)
        position += count
        return count
    }
}

/// A bounded set of pack buffers: `acquire` waits while all are in use, which is what
/// keeps packers from reading further ahead than the uploads can follow.
final class PackBufferPool: Sendable {
    private let free = Mutex<[PackBuffer]>([])
    private let made = Mutex(0)
    private let slots: DispatchSemaphore
    let capacity: Int

    init(count: Int, capacity: Int) {
        // Made at 0 and raised: libdispatch traps when a semaphore is freed below its
        // initial value, which a push that failed with buffers in flight would do.
        slots = DispatchSemaphore(value: 0)
        for _ in 0..<max(1, count) { slots.signal() }
        self.capacity = capacity
    }

    /// A buffer, allocated on first need; nil when `stop()` says to give up waiting.
    func acquire(stop: () -> Bool) -> PackBuffer? {
        while slots.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
            if stop() { return nil }
        }
        if let buffer = free.withLock({ $0.popLast() }) { return buffer }
        made.withLock { $0 += 1 }
        return PackBuffer(capacity: capacity)
    }

    func release(_ buffer: PackBuffer) {
        free.withLock { $0.append(buffer) }
        slots.signal()
    }
}
