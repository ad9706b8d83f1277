import Foundation
import Testing
import RegionKitTestSupport
import RegionKit
import RegionKitHTTP
import RegionKitService
import RegionKitStore

/// The server over TLS: a self-signed certificate made by openssl, checked by curl with it as the CA.
@Suite("HTTPS (optional TLS)", .serialized, .tags(.endToEnd), .enabled(if: TLSTools.paths != nil, "openssl or curl is not installed"))
struct HTTPSTests {
    /// Runs `tool` on a thread of its own (a curl waiting for the server under test must not hold a cooperative thread).
    static func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try blockingRun(tool, arguments) }) }
        }
    }

    static func blockingRun(_ tool: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("With tlsCertificate and tlsKey the API speaks HTTPS; bad files are refused with the key named")
    func https() async throws {
        let tools = try #require(TLSTools.paths)
        let directory = TestScratch.directory.appendingPathComponent("rk-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        let made = try await Self.run(tools.openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                                                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        #expect(made.status == 0, "\(made.output)")
        let settings = HTTPSettings(listen: "127.0.0.1:0", public: true, tlsCertificate: cert, tlsKey: key)
        var configuration = try HTTPConfiguration(settings: settings, environment: [:])
        configuration.idleTimeout = 1
        let service = MonitoringService(store: try RegionStore(path: TestDaemon.temporaryPath()), clock: VirtualClock(), sources: [.beacon: .authorized])
        try await service.start(regions: [TestDaemon.lobby])
        let server = RegionKitServer(service: service, configuration: configuration, events: EventBroadcaster())
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.run { continuation.yield($0) } }
        defer { task.cancel() }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let fetched = try await Self.run(tools.curl, ["-sS", "--max-time", "10", "--cacert", cert, "https://127.0.0.1:\(port)/v1/regions"])
        #expect(fetched.status == 0, "\(fetched.output)")
        #expect(fetched.output.contains(#""identifier":"lobby""#))
        // Plain HTTP to the TLS port gets no HTTP answer.
        let plain = try await Self.run(tools.curl, ["-sS", "--max-time", "5", "http://127.0.0.1:\(port)/healthz"])
        #expect(plain.status != 0 || !plain.output.contains("ok"))
        // A client that connects and never starts the TLS handshake is closed after the idle timeout.
        let silent = try LoopbackConnection(port: port)
        let closed = try await offPool { HTTPIdleConnectionTests.closed(silent, within: 5) }
        #expect(closed != nil, "a connection without a handshake still open after 5 s")

        #expect(throws: RegionKitError.self) { try HTTPSettings(tlsCertificate: cert).validate() }
        // A key file that cannot be read is refused with the configuration, before the daemon starts anything.
        let missingKey = HTTPSettings(listen: "127.0.0.1:0", public: true, tlsCertificate: cert, tlsKey: directory.appendingPathComponent("nope.pem").path)
        #expect { try HTTPConfiguration(settings: missingKey, environment: [:]) } throws: {
            ($0 as? RegionKitError)?.message.contains("http.tlsKey: cannot read a PEM private key") == true
        }
        let missing = HTTPConfiguration(host: "127.0.0.1", port: 0)
        var broken = missing
        broken.tlsCertificateFile = cert
        broken.tlsKeyFile = directory.appendingPathComponent("nope.pem").path
        let refused = RegionKitServer(service: service, configuration: broken, events: EventBroadcaster())
        await #expect { try await refused.run() } throws: { error in
            (error as? RegionKitError)?.message.contains("http.tlsKey") == true
        }
    }
}

enum TLSTools {
    static var paths: (openssl: String, curl: String)? {
        let openssl = "/usr/bin/openssl", curl = "/usr/bin/curl"
        guard FileManager.default.isExecutableFile(atPath: openssl), FileManager.default.isExecutableFile(atPath: curl) else { return nil }
        return (openssl, curl)
    }
}
