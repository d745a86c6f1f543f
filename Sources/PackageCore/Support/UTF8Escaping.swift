/// Bytes that should have been UTF-8 and are not, shown to a person.
package enum UTF8Escaping {
    /// Bytes that should be UTF-8, as text: valid sequences as they are, every byte of an
    /// invalid one as a three-digit octal escape (`caf\351`), as git prints such names.
    package static func escapingInvalid(_ bytes: [UInt8]) -> String {
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
