import Foundation
import Testing

@testable import PackageCore

@Suite("JSON: pkgtool's one writer, and Encodable values through it")
struct JSONTests {
    @Test("strings: quotes, backslashes, every control character escaped; other text as UTF-8")
    func strings() throws {
        let text = "a\"b\\c\n\r\t\u{0}\u{1F}\u{7F}\u{85}\u{9F} é €😀 /"
        let written = JSON.string(text).serialized()
        #expect(written == #""a\"b\\c\n\r\t\u0000\u001f\u007f\u0085\u009f é €😀 /""#)
        // Read back by Foundation, the same string.
        let parsed = try JSONSerialization.jsonObject(with: Data("[\(written)]".utf8)) as? [String]
        #expect(parsed == [text])
    }

    @Test("numbers: integers exactly, doubles shortest, non-finite as null")
    func numbers() throws {
        let values: [JSON] = [
            .int(Int64.min), .int(Int64.max), .unsigned(UInt64.max), .double(0.1), .double(2), .double(-0.0),
            .double(1e-7), .double(1.5e300), .double(1e15), .double(.nan),
        ]
        let written = JSON.array(values).serialized()
        #expect(
            written
                == "[-9223372036854775808,9223372036854775807,18446744073709551615,0.1,2,0,1e-07,1.5e+300,1000000000000000.0,null]")
        #expect(try JSONSerialization.jsonObject(with: Data(written.utf8)) is [Any])
    }

    @Test("objects keep the order given; pretty output indents by two")
    func layout() {
        let value = JSON.object([("b", .int(1)), ("a", .array([.bool(true), .null])), ("c", .object([])), ("d", .array([]))])
        #expect(value.serialized() == #"{"b":1,"a":[true,null],"c":{},"d":[]}"#)
        #expect(value.serialized(pretty: true) == "{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null\n  ],\n  \"c\": {},\n  \"d\": []\n}")
    }

    struct Sample: Codable, Equatable {
        enum Kind: String, Codable { case small = "small-files" }
        var zeta = 1
        var bytesWritten: Int64 = 2
        var peakRSSBytes: UInt64 = .max
        var kind = Kind.small
        var absent: String? = nil
        var present: String? = "yes"
        var figures: [Double] = [0.5, 3]
        var tools: [String: String] = ["rsync": "3.2", "cp": "9.1"]
        var _private = true
    }

    @Test("Encodable: keys in byte order, nil optionals left out, what JSONDecoder reads back")
    func encodable() throws {
        let written = try JSON(encoding: Sample()).serialized()
        #expect(
            written
                == #"{"_private":true,"bytesWritten":2,"figures":[0.5,3],"kind":"small-files","peakRSSBytes":18446744073709551615,"#
                + #""present":"yes","tools":{"cp":"9.1","rsync":"3.2"},"zeta":1}"#)
        #expect(try JSONDecoder().decode(Sample.self, from: Data(written.utf8)) == Sample())
    }

    @Test("Encodable with snake-case keys, as JSONEncoder's convertToSnakeCase spells them")
    func snakeCase() throws {
        // Checked against Foundation itself, key by key, and a dictionary's keys left alone.
        let probe = KeyProbe(keys: [
            "bytesWritten", "peakRssBytes", "peakRSSBytes", "cpuModel", "a", "_private", "URL", "myURLs", "already_snake",
            "small-edit", "x1Y", "é", "__b__", "aBC_dEf",
        ])
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let foundation = try JSONSerialization.jsonObject(with: encoder.encode(probe)) as? NSDictionary
        let ours = try JSONSerialization.jsonObject(
            with: Data(JSON(encoding: probe, keys: .snakeCase).serialized().utf8)) as? NSDictionary
        #expect(try #require(foundation) == (try #require(ours)))
        let written = try JSON(encoding: Sample(), keys: .snakeCase).serialized(pretty: true)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        // As with JSONEncoder: convertFromSnakeCase reads peak_rss_bytes back as peakRssBytes,
        // so an acronym in a key does not round-trip (the benchmark's keys have none).
        #expect(throws: DecodingError.self) { try decoder.decode(Sample.self, from: Data(written.utf8)) }
        #expect(written.contains("\"bytes_written\": 2") && written.contains("\"peak_rss_bytes\": 18446744073709551615"))
    }

    /// An object whose keys are the given strings, each with its own key as value, and a
    /// dictionary of them.
    struct KeyProbe: Encodable {
        struct Key: CodingKey {
            var stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        var keys: [String]

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for key in keys { try container.encode(key, forKey: Key(stringValue: key)) }
            let dictionary = Dictionary(uniqueKeysWithValues: keys.map { ($0, $0) })
            try container.encode(dictionary, forKey: Key(stringValue: "theDictionary"))
        }
    }

    @Test("a number that is not finite is refused, as JSONEncoder refuses it")
    func nonFinite() {
        #expect(throws: EncodingError.self) { try JSON(encoding: [Double.infinity]) }
    }
}
