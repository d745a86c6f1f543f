import PackageCore

/// Times and the machine's name as the conflict commands print them: an instant as ISO 8601
/// in UTC to the millisecond (as `log` prints versions), today's date on this machine's
/// clock, and the host name a conflict copy carries.
package enum CalendarTime {
    /// "2026-12-06T10:11:12.123Z" for nanoseconds since the epoch.
    package static func iso(_ nanoseconds: Int64) -> String {
        let (seconds, fraction) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let whole = fraction < 0 ? seconds - 1 : seconds
        let milliseconds = (fraction < 0 ? fraction + 1_000_000_000 : fraction) / 1_000_000
        let day = CalendarDay(secondsSince1970: whole)
        let ofDay = whole - (whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400) * 86_400
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(day)T\(pad(ofDay / 3600, 2)):\(pad(ofDay / 60 % 60, 2)):\(pad(ofDay % 60, 2)).\(pad(milliseconds, 3))Z"
    }

    /// The day it is now in this machine's time zone, the date a person reads on their clock.
    package static func today() -> CalendarDay {
        let (seconds, offset) = ProcessEnvironment.nowWithLocalOffset()
        return CalendarDay(secondsSince1970: seconds, offsetSeconds: offset)
    }

    /// This machine's name up to its first dot; "" when it has none.
    package static func hostName() -> String {
        ProcessEnvironment.hostName.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
    }
}
