import PackageCore

/// How names are printed: git's quoting, so that no name can forge a line of output or
/// reach a terminal as an escape sequence.
///
/// A name is printed as it is unless it holds a character listed below; then it is printed
/// in double quotes with C escapes, as git prints paths (`quote_c_style`) with
/// `core.quotePath=false`: `\a \b \t \n \v \f \r`, `\"`, `\\`, and three octal digits per
/// byte for the other control characters (ESC is `\033`). The characters quoted:
/// - C0 control characters (U+0000–U+001F) and DEL (U+007F), as git;
/// - `"` and `\`, as git, so that a quoted name reads back unambiguously;
/// - C1 control characters (U+0080–U+009F), each of its two UTF-8 bytes in octal
///   (U+009B is `\302\233`): git with `core.quotePath=false` prints them raw, but some
///   terminals take U+009B as an escape introducer.
/// Other non-ASCII characters (é, 日本, emoji) are printed as they are: names are UTF-8, and
/// git's default of escaping every byte ≥ 0x80 would make them unreadable.
public enum NameQuoting {
    /// Whether `scalar` is escaped when it occurs in a name.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        TextEscaping.isControl(scalar) || scalar == "\"" || scalar == "\\"
    }

    /// Whether `name` is printed in quotes.
    public static func needsQuotes(_ name: String) -> Bool {
        name.unicodeScalars.contains(where: needsEscape)
    }

    /// `name` as text output prints it: unchanged, or in double quotes with C escapes.
    public static func quoted(_ name: String) -> String {
        guard needsQuotes(name) else { return name }
        var text = "\""
        for scalar in name.unicodeScalars {
            text += needsEscape(scalar) ? escape(scalar) : String(scalar)
        }
        return text + "\""
    }

    /// `text` with its control characters (C0, DEL, C1) written as C escapes and nothing
    /// else changed: error and warning lines, which quote names as '…' for a person, go
    /// through this so that a name cannot break the line or drive the terminal.
    public static func escapingControlCharacters(_ text: String) -> String {
        TextEscaping.escapingControlCharacters(text)
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String { TextEscaping.cEscape(scalar) }
}
