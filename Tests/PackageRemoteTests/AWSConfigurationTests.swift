import Foundation
import PackageCore
import PackageTestSupport
import Testing

@testable import PackageRemote

/// The AWS shared configuration files (`~/.aws/credentials`, `~/.aws/config`), read in the
/// AWS CLI's order of precedence.
@Suite("AWS shared configuration") struct AWSConfigurationTests {
    /// A home directory with the two files.
    struct Home {
        let directory: TemporaryDirectory
        var environment: [String: String] { ["HOME": directory.path] }

        init(credentials: String?, config: String?) throws {
            directory = try TemporaryDirectory("aws-home")
            try FileManager.default.createDirectory(atPath: directory.url(".aws"), withIntermediateDirectories: true)
            if let credentials { try Files.write(directory.url(".aws/credentials"), credentials) }
            if let config { try Files.write(directory.url(".aws/config"), config) }
        }
    }

    static let credentials = """
        # keys, as `aws configure` writes them
        [default]
        aws_access_key_id = DEFAULTKEY
        aws_secret_access_key = defaultsecret

        [work]
        aws_access_key_id=WORKKEY
        aws_secret_access_key=worksecret
        aws_session_token = worktoken\r

        [assumed]
        role_arn = arn:aws:iam::123456789012:role/x
        source_profile = default
        """

    static let config = """
        [default]
        region = eu-west-3

        [profile work]
        region = eu-central-1
        endpoint_url = http://127.0.0.1:1
        s3 =
            endpoint_url = http://minio.local:9000
            addressing_style = virtual

        [profile shared]
        aws_access_key_id = SHAREDKEY
        aws_secret_access_key = sharedsecret
        services = local-s3

        [services local-s3]
        s3 =
          endpoint_url = https://s3.example.test
        """

    @Test func theDefaultProfileGivesKeysAndRegion() throws {
        let home = try Home(credentials: Self.credentials, config: Self.config)
        let configuration = try S3Configuration.fromEnvironment(home.environment)
        #expect(configuration.credentials.accessKeyID == "DEFAULTKEY")
        #expect(configuration.credentials.secretAccessKey == "defaultsecret")
        #expect(configuration.region == "eu-west-3")
        #expect(configuration.endpoint == "https://s3.eu-west-3.amazonaws.com")
        #expect(!configuration.pathStyle)
    }

    @Test func aNamedProfileReadsBothFilesAndItsS3Block() throws {
        let home = try Home(credentials: Self.credentials, config: Self.config)
        var environment = home.environment
        environment["AWS_PROFILE"] = "work"
        let configuration = try S3Configuration.fromEnvironment(environment)
        #expect(configuration.credentials.accessKeyID == "WORKKEY")
        #expect(configuration.credentials.sessionToken == "worktoken")
        #expect(configuration.region == "eu-central-1")
        // The s3 block's endpoint wins over the profile's global one, and its addressing style holds.
        #expect(configuration.endpoint == "http://minio.local:9000")
        #expect(!configuration.pathStyle)
        // `--profile` wins over AWS_PROFILE, and a services section gives the endpoint.
        let shared = try S3Configuration.fromEnvironment(environment, profile: "shared")
        #expect(shared.credentials.accessKeyID == "SHAREDKEY")
        #expect(shared.endpoint == "https://s3.example.test")
        #expect(shared.pathStyle)
        #expect(shared.region == "us-east-1")
    }

    @Test func theEnvironmentWinsOverTheFiles() throws {
        let home = try Home(credentials: Self.credentials, config: Self.config)
        var environment = home.environment
        environment["AWS_PROFILE"] = "work"
        environment["AWS_ACCESS_KEY_ID"] = "ENVKEY"
        environment["AWS_SECRET_ACCESS_KEY"] = "envsecret"
        environment["AWS_REGION"] = "ap-south-1"
        environment["AWS_ENDPOINT_URL"] = "http://env.local:8333"
        let configuration = try S3Configuration.fromEnvironment(environment)
        #expect(configuration.credentials.accessKeyID == "ENVKEY")
        #expect(configuration.credentials.sessionToken == nil)
        #expect(configuration.region == "ap-south-1")
        #expect(configuration.endpoint == "http://env.local:8333")
        // …except the keys when a profile is named on the command line (as the AWS CLI's --profile).
        #expect(try S3Configuration.fromEnvironment(environment, profile: "work").credentials.accessKeyID == "WORKKEY")
        // --endpoint wins over everything; configured endpoints can be ignored.
        #expect(try S3Configuration.fromEnvironment(environment, endpoint: "http://cli:1").endpoint == "http://cli:1")
        environment["AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"] = "true"
        #expect(try S3Configuration.fromEnvironment(environment).endpoint == "https://s3.ap-south-1.amazonaws.com")
    }

    @Test func theFilesCanLiveElsewhere() throws {
        let directory = try TemporaryDirectory("aws-elsewhere")
        try Files.write(directory.url("keys"), "[default]\naws_access_key_id = K\naws_secret_access_key = S\n")
        try Files.write(directory.url("settings"), "[default]\nregion = sa-east-1\n")
        let configuration = try S3Configuration.fromEnvironment([
            "AWS_SHARED_CREDENTIALS_FILE": directory.url("keys"), "AWS_CONFIG_FILE": directory.url("settings"),
        ])
        #expect(configuration.credentials.accessKeyID == "K")
        #expect(configuration.region == "sa-east-1")
    }

    @Test func whatCannotBeUsedIsOneClearLine() throws {
        let home = try Home(credentials: Self.credentials, config: Self.config)
        func message(_ environment: [String: String], profile: String? = nil) -> String {
            do {
                _ = try S3Configuration.fromEnvironment(environment, profile: profile)
                return "no error"
            } catch {
                return error.message
            }
        }
        var environment = home.environment
        environment["AWS_PROFILE"] = "missing"
        #expect(message(environment).contains("the AWS profile 'missing' is in neither"))
        #expect(message(home.environment, profile: "assumed").contains("through 'role_arn', which pkgtool does not run"))
        // No files, no variables: what to set, and where.
        let empty = try TemporaryDirectory("aws-none")
        #expect(message(["HOME": empty.path]).contains("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give"))
        // Damaged files name the file and line; the secret is never repeated.
        let broken = try Home(credentials: "[default\naws_secret_access_key = defaultsecret\n", config: nil)
        let said = message(broken.environment)
        #expect(said.contains("credentials' line 1: a section header without ']'"))
        #expect(!said.contains("defaultsecret"))
        let orphan = try Home(credentials: "aws_access_key_id = K\n", config: nil)
        #expect(message(orphan.environment).contains("a setting before any [section]"))
        let folder = try Home(credentials: nil, config: nil)
        try FileManager.default.createDirectory(atPath: folder.directory.url(".aws/credentials"), withIntermediateDirectories: true)
        #expect(message(folder.environment).contains("is not a regular file"))
    }

    /// A process with no AWS variables at all reaches the store through a profile in the
    /// files (keys in the credentials file, endpoint in the config file).
    @Test func aPushAndPullThroughAProfileAlone() throws {
        let fixture = try RemoteFixture("awsprofile")
        let source = try fixture.makePackage("source")
        let remote = fixture.location.description
        let settings = try TemporaryDirectory("aws-settings")
        try Files.write(
            settings.url("credentials"),
            "[seaweed]\naws_access_key_id = \(SeaweedServer.accessKey)\naws_secret_access_key = \(SeaweedServer.secretKey)\n")
        try Files.write(settings.url("config"), "[profile seaweed]\nregion = us-east-1\nendpoint_url = \(fixture.server.endpoint)\n")
        var device = PkgtoolProcess(server: fixture.server, cacheDirectory: fixture.path("cache-a"))
        device.extraEnvironment = [
            "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_REGION": "", "AWS_ENDPOINT_URL": "",
            "AWS_SHARED_CREDENTIALS_FILE": settings.url("credentials"), "AWS_CONFIG_FILE": settings.url("config"),
            "AWS_PROFILE": "seaweed",
        ]
        let pushed = try device.run("push", source, remote)
        #expect(pushed.status == 0, "\(pushed.errors)")
        let copy = fixture.path("copy")
        let pulled = try device.run("pull", remote, copy)
        #expect(pulled.status == 0, "\(pulled.errors)")
        #expect(try RemoteFixture.rootHash(copy) == (try RemoteFixture.rootHash(source)))
        // --profile names it on the command line, over AWS_PROFILE.
        device.extraEnvironment["AWS_PROFILE"] = "nobody"
        let logged = try device.run("log", "--profile", "seaweed", remote)
        #expect(logged.status == 0, "\(logged.errors)")
        let refused = try device.run("log", remote)
        #expect(refused.status == 2)
        #expect(refused.errors.contains("the AWS profile 'nobody' is in neither"))
    }
}
