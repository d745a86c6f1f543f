/// Byte counts as a person reads them: "820 B", "1.5 MiB", "3.2 GiB" (binary units, one
/// decimal), for messages and progress lines.
package enum ByteCountText {
    package static func describe(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        let tenths = Int((value * 10).rounded())
        return unit == 0 ? "\(count) B" : "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
