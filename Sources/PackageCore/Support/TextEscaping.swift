/// Text shown to a person that must stay one honest line: control characters written as
/// C escapes, and bytes that should have been UTF-8 as octal, as git writes names.
package enum TextEscaping {
    /// Whether `scalar` is a control character: C0, DEL or C1 (U+0080–U+009F, which some
    /// terminals take as escape introducers).
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// The C escape of one character: `\a \b \t \n \v \f \r \" \\`, and three octal
    /// digits per UTF-8 byte for any other (ESC is `\033`, U+009B is `\302\233`).
    package static func cEscape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\u{07}": return "\\a"
        case "\u{08}": return "\\b"
        case "\t": return "\\t"
        case "\n": return "\\n"
        case "\u{0B}": return "\\v"
        case "\u{0C}": return "\\f"
        case "\r": return "\\r"
        case "\"": return "\\\""
        case "\\": return "\\\\"
        default:
            return String(scalar).utf8.map { byte in
                let octal = String(byte, radix: 8)
                return "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }.joined()
        }
    }

    /// `text` with its control characters escaped (`cEscape`) and nothing else changed.
    package static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) { escaped += cEscape(scalar) } else { escaped.unicodeScalars.append(scalar) }
        }
        return escaped
    }

    /// Bytes that should be UTF-8, as text: valid sequences as they are, every byte of an
    /// invalid one as a three-digit octal escape (`caf\351`), as git prints such names.
    package static func escapingInvalidUTF8(_ bytes: [UInt8]) -> String {
        var text = ""
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length =
                switch lead {
                case 0x00...0x7F: 1
                case 0xC2...0xDF: 2
                case 0xE0...0xEF: 3
                case 0xF0...0xF4: 4
                default: 0
                }
            if length > 0, index + length <= bytes.count,
                let piece = String(validating: bytes[index..<index + length], as: UTF8.self)
            {
                text += piece
                index += length
            } else {
                let octal = String(lead, radix: 8)
                text += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
                index += 1
            }
        }
        return text
    }
}
