import Glibc
import PackageCore

/// Decides from a sample whether an entry is worth deflating.
///
/// Most of the time `zip -6` spends on a document package goes into deflating random media
/// that will not shrink. A byte histogram tells random data from text in microseconds; in
/// between, a level-1 deflate of the sample decides.
enum Compressibility {
    /// The size of each of the three sample windows (start, middle, end of the entry).
    static let window = 16 * 1024

    /// Order-0 entropy of `bytes`, in bits per byte.
    static func entropy(_ bytes: UnsafeRawBufferPointer) -> Double {
        guard bytes.count > 0 else { return 0 }
        var counts = [Int](repeating: 0, count: 256)
        counts.withUnsafeMutableBufferPointer { table in
            for byte in bytes { table[Int(byte)] &+= 1 }
        }
        let total = Double(bytes.count)
        var sum = 0.0
        for count in counts where count > 0 {
            let p = Double(count) / total
            sum -= p * log2(p)
        }
        return sum
    }

    /// The entropy a sample of `count` uniformly random bytes shows on average: below 8
    /// because a short sample cannot fill the histogram evenly (Miller–Madow bias).
    static func randomEntropy(_ count: Int) -> Double {
        8 - 255 / (2 * Double(max(count, 1)) * 0.693_147_180_559_945_3)
    }

    enum Verdict { case deflate, store, trial }

    /// What the histogram says: clearly compressible, clearly random, or unclear.
    static func quickVerdict(_ sample: UnsafeRawBufferPointer) -> Verdict {
        if sample.count < 512 { return .deflate }  // small: deflating is cheap, just try
        let measured = entropy(sample)
        if measured < 7.0 { return .deflate }
        if measured > randomEntropy(sample.count) - 0.05 { return .store }
        return .trial
    }

    /// Whether a level-1 deflate of the sample saves at least 3 %.
    static func trial(_ sample: UnsafeRawBufferPointer, deflater: inout Deflater, scratch: UnsafeMutableRawBufferPointer)
        -> Bool
    {
        guard let produced = deflater.compress(sample, dictionary: nil, final: true, into: scratch) else { return false }
        return Double(produced) < Double(sample.count) * 0.97
    }
}
