import Foundation
import Testing

@testable import PackageRemote

/// S3's answers read by an XML parser: namespaces, entities, CDATA and comments handled, a
/// malformed or hostile document refused rather than half-read.
@Suite("S3 XML answers")
struct S3XMLTests {
    @Test func errorDocumentsWithEntitiesAndNamespaces() throws {
        let bytes = Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment with <Code>Fake</Code> inside -->
            <Error xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Code>SlowDown</Code>\
            <Message>Please reduce your request rate &amp; retry &lt;soon&gt;</Message>\
            <RequestId><![CDATA[4442587FB7D0A2F9]]></RequestId></Error>
            """.utf8)
        let document = try #require(S3ErrorDocument(bytes))
        #expect(document.code == "SlowDown")
        #expect(document.message == "Please reduce your request rate & retry <soon>")
        #expect(S3ErrorDocument(Array("<Error><Message>no code</Message></Error>".utf8)) == nil)
        #expect(S3ErrorDocument(Array("<html><body>502 Bad Gateway</body></html>".utf8)) == nil)
        #expect(S3ErrorDocument(Array("<Error><Code>Unclosed".utf8)) == nil)
        #expect(S3ErrorDocument([]) == nil)
    }

    @Test func listingPagesAndTheirContinuation() throws {
        let page = Array(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Name>b</Name><Prefix>docs/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>
              <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
              <Contents><Key>docs/packs/a&amp;b</Key><Size>123</Size><ETag>"x"</ETag></Contents>
              <Contents><Key>docs/HEAD</Key><Size>0</Size></Contents>
            </ListBucketResult>
            """.utf8)
        let (objects, next) = try ListingParser.parse(page)
        #expect(objects.map(\.key) == ["docs/packs/a&b", "docs/HEAD"])
        #expect(objects.map(\.size) == [123, 0])
        #expect(next == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=")
        let last = Array("<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>".utf8)
        #expect(try ListingParser.parse(last).objects.isEmpty && ListingParser.parse(last).next == nil)
        // Not a listing, a listing with a keyless object, a truncated one without a token: errors.
        for bad in [
            "<Error><Code>AccessDenied</Code></Error>", "<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>",
            "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>", "not xml at all",
        ] {
            #expect(throws: RemoteError.self) { try ListingParser.parse(Array(bad.utf8)) }
        }
    }

    /// Entities that expand a thousand-fold at each of ten levels ("billion laughs"), and an
    /// external entity naming a local file: neither is expanded into the answer.
    @Test func hostileDocumentsAreNotExpanded() throws {
        var laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE Error [\n<!ENTITY l0 \"ha\">\n"
        for level in 1...10 {
            laughs += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">\n"
        }
        laughs += "]>\n<Error><Code>&l10;</Code><Message>m</Message></Error>"
        let expanded = S3ErrorDocument(Array(laughs.utf8))
        #expect((expanded?.code.utf8.count ?? 0) < 1 << 20)
        let external = """
            <?xml version="1.0"?><!DOCTYPE Error [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
            <Error><Code>&secret;</Code><Message>m</Message></Error>
            """
        #expect(S3ErrorDocument(Array(external.utf8))?.code.contains("root:") != true)
    }
}
