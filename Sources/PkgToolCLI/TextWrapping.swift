/// Help text filled to a width, as `--help` prints it: paragraphs re-flowed between blank
/// lines, lines indented by two or more spaces kept as they are (a laid-out table), and
/// hanging indents for option and exit-status lists.
enum TextWrapping {
    /// The width help is filled to: the terminal's (at most 100 columns, the longest line
    /// still easy to read), 80 when standard output is not a terminal.
    static func helpWidth(terminalColumns: Int?) -> Int {
        guard let terminalColumns else { return 80 }
        return max(40, min(terminalColumns, 100))
    }

    /// `words` filled into lines of at most `width` columns, every line after the first
    /// starting with `indent` spaces (the first starts where the caller already is, at
    /// column `start`). A word longer than a line gets a line of its own.
    static func fill(_ words: [Substring], width: Int, start: Int = 0, indent: Int = 0) -> String {
        var result = ""
        var column = start
        var lineHasWords = false
        for word in words {
            if lineHasWords && column + 1 + word.count > width {
                result += "\n" + String(repeating: " ", count: indent)
                column = indent
                lineHasWords = false
            }
            if lineHasWords {
                result += " "
                column += 1
            }
            result += word
            column += word.count
            lineHasWords = true
        }
        return result
    }

    /// A details text filled to `width`: runs of plain lines re-flowed as paragraphs,
    /// indented lines kept.
    static func paragraphs(_ text: String, width: Int) -> String {
        var output: [String] = []
        var pending: [Substring] = []
        func flush() {
            if !pending.isEmpty { output.append(fill(pending, width: width)) }
            pending = []
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " }) {
                flush()
                output.append("")
            } else if line.hasPrefix("  ") {
                flush()
                output.append(String(line))
            } else {
                pending += line.split(separator: " ")
            }
        }
        flush()
        return output.joined(separator: "\n")
    }

    /// `label` padded to `labelWidth` after a two-space indent, then `text` filled to
    /// `width` under a hanging indent (the text's column); when the labels are so wide that
    /// little room would be left, the text goes on the next lines, indented by 8.
    static func item(_ label: String, labelWidth: Int, text: String, width: Int) -> String {
        let column = 2 + labelWidth + 2
        let words = text.split(separator: " ")
        guard width - column >= 30 else {
            return "  " + label + "\n" + String(repeating: " ", count: 8) + fill(words, width: width, start: 8, indent: 8)
        }
        let padding = String(repeating: " ", count: labelWidth - label.count + 2)
        return "  " + label + padding + fill(words, width: width, start: column, indent: column)
    }

    /// A usage line filled to `width`: `[…]` and `(…)` groups are never split, and the
    /// lines after the first are indented under the first argument.
    static func usage(_ line: String, width: Int) -> String {
        var groups: [Substring] = []
        var depth = 0
        var start = line.startIndex
        for index in line.indices {
            switch line[index] {
            case "[", "(": depth += 1
            case "]", ")": depth = max(0, depth - 1)
            case " " where depth == 0:
                if start < index { groups.append(line[start..<index]) }
                start = line.index(after: index)
            default: break
            }
        }
        if start < line.endIndex { groups.append(line[start...]) }
        // "usage: pkgtool NAME" stays together; the rest hangs under what follows it.
        let head = groups.prefix(3)
        let indent = head.map(\.count).reduce(0, +) + head.count
        let first = head.joined(separator: " ")
        guard groups.count > 3 else { return first }
        return first + " " + fill(Array(groups.dropFirst(3)), width: width, start: indent, indent: min(indent, 24))
    }
}
