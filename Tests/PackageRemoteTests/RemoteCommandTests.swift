import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// `pkgtool push`, `pull`, `log` and `diff … s3://…` as processes, against a real SeaweedFS.
@Suite("Remote commands") struct RemoteCommandTests {
    @Test func pushPullLogAndDiffThroughTheCommandLine() throws {
        let fixture = try RemoteFixture("cli")
        let source = try fixture.makePackage("source")
        let remote = fixture.location.description
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))

        let pushed = try device.run("push", source, remote)
        #expect(pushed.status == 0, "\(pushed.errors)")
        #expect(pushed.output.hasPrefix("pushed \(source) to \(remote) as version 1 ("))
        let again = try device.run("push", source, remote)
        #expect(again.status == 0)
        #expect(again.output.contains("is up to date"))

        let log = try device.run("log", "--json", remote)
        #expect(log.status == 0)
        let versions = try JSONSerialization.jsonObject(with: Data(log.output.utf8)) as? [[String: Any]]
        #expect(versions?.count == 1)
        #expect(versions?.first?["root_hash"] as? String == (try RemoteFixture.rootHash(source)).description)
        #expect(versions?.first?["parent"] is NSNull)
        let text = try device.run("log", remote)
        #expect(text.output.split(separator: "\n").count == 2)

        let other = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let copy = fixture.path("copy")
        let pulled = try other.run("pull", "--json", remote, copy)
        #expect(pulled.status == 0, "\(pulled.errors)")
        #expect(try RemoteFixture.rootHash(copy) == (try RemoteFixture.rootHash(source)))
        #expect(try device.run("diff", source, remote).status == 0)

        try Files.write(source + "/pages/a/page4.json", "{\"changed\": 1}")
        let different = try device.run("diff", source, remote)
        #expect(different.status == 1)
        #expect(different.output == "M\tpages/a/page4.json\n")
    }

    @Test func theRemoteMovingOnIsRefusedInOneLine() throws {
        let fixture = try RemoteFixture("conflict")
        let remote = fixture.location.description
        let a = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        let b = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-b"))
        let mine = try fixture.makePackage("mine")
        #expect(try a.run("push", mine, remote).status == 0)
        let theirs = fixture.path("theirs")
        #expect(try b.run("pull", remote, theirs).status == 0)

        // A pushes again; B's edit is based on version 1.
        try Files.write(mine + "/metadata.json", "{\"title\": \"A's\"}")
        #expect(try a.run("push", mine, remote).status == 0)
        try Files.write(theirs + "/metadata.json", "{\"title\": \"B's\"}")
        let refused = try b.run("push", theirs, remote)
        #expect(refused.status == 1)
        #expect(refused.errors.hasPrefix("pkgtool: the remote moved on: \(remote) is at version 2"))
        #expect(refused.errors.split(separator: "\n").count == 1)
        // B's pull would discard its change: refused too, unless forced.
        let pull = try b.run("pull", remote, theirs)
        #expect(pull.status == 1)
        #expect(pull.errors.contains("has changes not pushed"))
        let forced = try b.run("push", "--force", theirs, remote)
        #expect(forced.status == 0, "\(forced.errors)")
        let versions = try PackageRemote.log(fixture.location, options: fixture.options())
        #expect(versions.map(\.sequence) == [3, 2, 1])
        #expect(versions[0].rootHash == (try RemoteFixture.rootHash(theirs)))
    }

    @Test func badInputAndTroubleAreOneLineEach() throws {
        let fixture = try RemoteFixture("bad")
        let source = try fixture.makePackage("source", pages: 3, mediaSize: 1000)
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))

        for url in ["s3:/bucket/x", "s3://", "s3://Bucket/x", "s3://ab/x", "s3://bucket//x", "s3://bucket/a/../b", "http://b/x"] {
            let result = try device.run("push", source, url)
            #expect(result.status == 2, "\(url)")
            #expect(result.errors.hasPrefix("pkgtool: malformed remote '\(url)'"), "\(url): \(result.errors)")
        }
        for arguments in [["log", "s3://no-such-bucket-x/p"], ["push", source, "s3://no-such-bucket-x/p"]] {
            let result = try device.run(arguments)
            #expect(result.status == 2)
            #expect(result.errors == "pkgtool: bucket 'no-such-bucket-x' does not exist at \(fixture.server.endpoint)\n")
        }
        let empty = try device.run("log", "s3://\(fixture.bucket)/nothing/here")
        #expect(empty.status == 1)
        #expect(empty.errors == "pkgtool: s3://\(fixture.bucket)/nothing/here is not a pkgtool remote (it has no HEAD object)\n")

        // A prefix holding someone else's objects is not taken over.
        let s3 = S3Connection(configuration: fixture.server.configuration(), counters: TransferCounters(), cancellation: nil)
        _ = try s3.put(bucket: fixture.bucket, key: "photos/cat.jpg", bytes: [1, 2, 3])
        let foreign = try device.run("push", source, "s3://\(fixture.bucket)/photos")
        #expect(foreign.status == 1)
        #expect(foreign.errors.contains("is not a pkgtool remote: it holds other objects ('photos/cat.jpg')"))
        _ = try s3.put(bucket: fixture.bucket, key: "notes/HEAD", bytes: Array("ref: refs/heads/main\n".utf8))
        let notOurs = try device.run("pull", "s3://\(fixture.bucket)/notes", fixture.path("dest"))
        #expect(notOurs.status == 1)
        #expect(notOurs.errors.contains("is not a pkgtool remote: its HEAD object is not pkgtool's"))
        #expect(try FileSystem.statusIfExists(fixture.path("dest")) == nil)

        var wrong = device
        wrong.extraEnvironment = ["AWS_SECRET_ACCESS_KEY": "not-the-secret"]
        let refused = try wrong.run("push", source, fixture.location.description)
        #expect(refused.status == 2)
        #expect(refused.errors.hasPrefix("pkgtool: \(fixture.server.endpoint) refused the credentials: SignatureDoesNotMatch"))
        #expect(refused.errors.split(separator: "\n").count == 1)
        wrong.extraEnvironment = ["AWS_ACCESS_KEY_ID": "nobody"]
        let unknown = try wrong.run("log", fixture.location.description)
        #expect(unknown.status == 2)
        #expect(unknown.errors.contains("refused the credentials"))
        wrong.extraEnvironment = ["AWS_ACCESS_KEY_ID": ""]
        let missing = try wrong.run("log", fixture.location.description)
        #expect(missing.status == 2)
        #expect(missing.errors.hasPrefix("pkgtool: no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give the AWS profile 'default' keys in '"))
        #expect(missing.errors.split(separator: "\n").count == 1)

        let unreachable = try device.run("log", "--retries", "1", "--endpoint", "http://127.0.0.1:9", fixture.location.description)
        #expect(unreachable.status == 2)
        #expect(unreachable.errors.hasPrefix("pkgtool: cannot reach the S3 endpoint http://127.0.0.1:9:"))
        let badEndpoint = try device.run("log", "--endpoint", "ftp://x", fixture.location.description)
        #expect(badEndpoint.status == 2)
        #expect(badEndpoint.errors.hasPrefix("pkgtool: malformed endpoint 'ftp://x'"))
        let notAPackage = try device.run("push", source + "/metadata.json", fixture.location.description)
        #expect(notAPackage.status == 2)
        #expect(notAPackage.errors.contains("not a package directory"))
    }

    @Test func noOutputOfAFailingCommandHoldsTheSecret() throws {
        let fixture = try RemoteFixture("secret")
        let source = try fixture.makePackage("source", pages: 2, mediaSize: 1000)
        let secret = SeaweedServer.secretKey
        let key = SeaweedServer.accessKey
        let other = "another-secret-Zq8/+w"  // in a URL only, not in the environment
        let device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache"))
        let host = fixture.server.endpoint.dropFirst("http://".count)
        let remote = fixture.location.description
        var runs: [(label: String, environment: [String: String], arguments: [String], status: Int32)] = [
            ("endpoint in the environment", ["AWS_ENDPOINT_URL": "http://\(key):\(secret)@\(host)"], ["log", remote], 2),
            ("endpoint option", [:], ["push", "--json", "--endpoint", "http://\(key):\(secret)@\(host)", source, remote], 2),
            ("endpoint option, another secret", [:], ["log", "--endpoint", "https://\(key):\(other)@\(host)/", remote], 2),
            ("s3 URL", [:], ["pull", "--json", "s3://\(key):\(secret)@\(fixture.bucket)/p", fixture.path("dest")], 2),
            ("s3 URL, another secret", [:], ["push", source, "s3://\(key):\(other)@\(fixture.bucket)"], 2),
            ("the secret as a prefix", [:], ["log", "--json", "s3://\(fixture.bucket)/\(secret)"], 1),
            ("the secret as a path", [:], ["push", fixture.path(secret), remote], 2),
            ("unreachable", ["AWS_SESSION_TOKEN": "token-\(secret)"], ["log", "--retries", "0", "--endpoint", "http://127.0.0.1:9", remote], 2),
            ("a bad option value", [:], ["log", "--max-time", secret, remote], 2),
        ]
        runs.append(("wrong secret", ["AWS_SECRET_ACCESS_KEY": other], ["push", source, remote], 2))
        for run in runs {
            var process = device
            process.extraEnvironment = run.environment
            let result = try process.run(run.arguments)
            #expect(result.status == run.status, "\(run.label): \(result.errors)")
            for text in [result.output, result.errors] {
                #expect(!text.contains(secret) && !text.contains(other), "\(run.label): \(text)")
            }
            #expect(result.errors.hasPrefix("pkgtool: "), "\(run.label): \(result.errors)")
        }
        // The library's own messages leave the userinfo out too.
        #expect {
            _ = try S3Configuration.fromEnvironment(
                ["AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret], endpoint: "http://\(key):\(secret)@h:1")
        } throws: { error in
            let message = (error as? RemoteError)?.message ?? ""
            return !message.contains(secret) && message.contains("'http://***@h:1'") && message.contains("credentials")
        }
        #expect {
            _ = try RemoteLocation(parsing: "s3://\(key):\(secret)@bucket/p")
        } throws: { error in
            let message = (error as? RemoteError)?.message ?? ""
            return !message.contains(secret) && message.contains("'s3://***@bucket/p'")
        }
        #expect(SecretRedaction.withoutUserinfo("see http://a:b@h:1/x and s3://k@b/p, 'https://u@v'") == "see http://***@h:1/x and s3://***@b/p, 'https://***@v'")
        #expect(SecretRedaction(secrets: [secret, "short"]).apply("a \(secret) b short") == "a *** b short")
    }
}
