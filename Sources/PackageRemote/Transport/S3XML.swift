import CXML2
import Glibc

/// One element of an S3 answer: its name (without a namespace prefix), its text, its child
/// elements in order. S3's answers are small (an error document, a listing page of at most
/// 1,000 keys, capped at 16 MiB by the transport), so a whole tree is fine.
///
/// Parsed by libxml2's streaming reader, linked directly as a system library: entities,
/// CDATA, namespaces, comments and encodings are an XML parser's job, not substring
/// searches'. Nothing is fetched from the network and no entity is substituted (an
/// entity's reference adds nothing to the text); libxml2's own limits on depth and
/// expansion stay on. Not FoundationXML: it is the same libxml2 beneath, but it would load
/// the whole of Foundation (with its ICU data) into every `pkgtool-remote` process, about
/// 6 MiB of resident memory and a slower start for every remote command.
final class S3XMLElement {
    let name: String
    fileprivate(set) var text = ""
    fileprivate(set) var children: [S3XMLElement] = []

    init(name: String) { self.name = name }

    /// The first child element called `name`.
    func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }

    /// Every child element called `name`, in order.
    func children(named name: String) -> [S3XMLElement] { children.filter { $0.name == name } }

    /// The text of the first child called `name`.
    func text(of name: String) -> String? { child(name)?.text }

    /// The root element of `bytes`, or nil when they are not well-formed XML.
    static func parse(_ bytes: [UInt8]) -> S3XMLElement? {
        guard !bytes.isEmpty, bytes.count <= Int(Int32.max) else { return nil }
        _ = libxml2Ready
        return bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { characters in
                // The reader reads `characters` lazily: the whole parse happens in here.
                guard let reader = xmlReaderForMemory(characters.baseAddress, Int32(characters.count), nil, nil, options)
                else { return nil }
                defer { xmlFreeTextReader(reader) }
                return TreeBuilder.build(reading: reader)
            }
        }
    }

    /// No network, no messages on standard error (a refusal is pkgtool's one line).
    private static let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue)

    /// libxml2 set up once, before any thread parses (its 2.9 releases ask for it).
    private static let libxml2Ready: Void = xmlInitParser()

    /// Builds the tree from the reader's nodes: text goes to the innermost open element.
    private enum TreeBuilder {
        static func build(reading reader: xmlTextReaderPtr) -> S3XMLElement? {
            var root: S3XMLElement?
            var open: [S3XMLElement] = []
            while true {
                let step = xmlTextReaderRead(reader)
                if step == 0 { break }
                guard step == 1 else { return nil }
                switch Int32(xmlTextReaderNodeType(reader)) {
                case Int32(XML_READER_TYPE_ELEMENT.rawValue):
                    let element = S3XMLElement(name: string(xmlTextReaderConstLocalName(reader)))
                    if let parent = open.last {
                        parent.children.append(element)
                    } else if root == nil {
                        root = element
                    } else {
                        return nil
                    }
                    if xmlTextReaderIsEmptyElement(reader) != 1 { open.append(element) }
                case Int32(XML_READER_TYPE_END_ELEMENT.rawValue):
                    _ = open.popLast()
                case Int32(XML_READER_TYPE_TEXT.rawValue), Int32(XML_READER_TYPE_CDATA.rawValue),
                    Int32(XML_READER_TYPE_WHITESPACE.rawValue), Int32(XML_READER_TYPE_SIGNIFICANT_WHITESPACE.rawValue):
                    open.last?.text += string(xmlTextReaderConstValue(reader))
                default:
                    continue
                }
            }
            // A document cut short is refused, whatever the parser's own verdict.
            guard let root, open.isEmpty else { return nil }
            return root
        }

        private static func string(_ text: UnsafePointer<xmlChar>?) -> String {
            guard let text else { return "" }
            return String(cString: text)
        }
    }
}

/// An S3 error document: `<Error><Code>…</Code><Message>…</Message></Error>`.
struct S3ErrorDocument {
    var code: String
    var message: String

    init?(_ bytes: [UInt8]) {
        guard let root = S3XMLElement.parse(bytes), root.name == "Error", let code = root.text(of: "Code") else {
            return nil
        }
        self.code = code
        message = root.text(of: "Message") ?? ""
    }
}

/// The few pieces of ListObjectsV2's answer a remote needs: keys, sizes, the continuation.
enum ListingParser {
    /// The page's objects and the next page's token; an answer that is not a listing is
    /// an error, not an empty page.
    static func parse(_ bytes: [UInt8]) throws(RemoteError) -> (
        objects: [(key: String, size: Int64, modified: Int64?)], next: String?
    ) {
        guard let root = S3XMLElement.parse(bytes), root.name == "ListBucketResult" else {
            throw RemoteError(.server, "the store's answer to a listing is not a ListObjectsV2 result")
        }
        var objects: [(key: String, size: Int64, modified: Int64?)] = []
        for item in root.children(named: "Contents") {
            guard let key = item.text(of: "Key"), let size = Int64(item.text(of: "Size") ?? ""), size >= 0 else {
                throw RemoteError(.server, "the store listed an object without a key or a size")
            }
            objects.append((key, size, item.text(of: "LastModified").flatMap(Self.seconds)))
        }
        let truncated = root.text(of: "IsTruncated") == "true"
        guard truncated else { return (objects, nil) }
        guard let next = root.text(of: "NextContinuationToken"), !next.isEmpty else {
            throw RemoteError(.server, "the store's listing is truncated but gives no continuation token")
        }
        return (objects, next)
    }

    /// Seconds since the epoch of an ISO 8601 UTC time as S3 lists it
    /// (`2026-12-06T09:19:50.000Z`, fractions ignored); nil for anything else.
    static func seconds(_ text: String) -> Int64? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int32? {
            var value: Int32 = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int32(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
        else { return nil }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        return Int64(timegm(&parts))
    }
}
