import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import RegionKit
import RegionKitService
import RegionKitStore
import ServiceLifecycle

/// The daemon's HTTP server: the versioned JSON API (`/v1/…`), live events over Server-Sent
/// Events, health and readiness probes, Prometheus metrics, the OpenAPI document and the dashboard.
///
/// It reads and changes the daemon through an ``APIBackend``: one daemon's `MonitoringService`
/// (``SingleDaemonBackend``, with the ``EventBroadcaster`` its `onLogged` feeds) or a cluster
/// member's view of the shared store (``ClusterMemberBackend``, which feeds the broadcaster from
/// the shared log); and a closure reporting the sources' status.
///
/// ```swift
/// let events = EventBroadcaster()
/// let service = MonitoringService(store: store, sources: [.beacon: .authorized], onLogged: events.publish)
/// try service.start(regions: configured)
/// let server = RegionKitServer(service: service, configuration: try HTTPConfiguration(listen: "127.0.0.1:8080", token: token),
///                              events: events, sources: { [] })
/// try await server.run { port in print("listening on \(port)") }
/// ```
public final class RegionKitServer: Sendable {
    public let backend: any APIBackend
    public let configuration: HTTPConfiguration
    public let events: EventBroadcaster
    public let metrics = ServerMetrics()
    let sources: @Sendable () -> [SourceStatus]
    let outputs: @Sendable () -> [OutputStatus]
    let logger: Logger

    /// One daemon: ``SingleDaemonBackend`` over `service`.
    public convenience init(service: MonitoringService, configuration: HTTPConfiguration, events: EventBroadcaster,
                            sources: @escaping @Sendable () -> [SourceStatus] = { [] }, outputs: @escaping @Sendable () -> [OutputStatus] = { [] },
                            logger: Logger = Logger(label: "regionkit.http")) {
        self.init(backend: SingleDaemonBackend(service: service), configuration: configuration, events: events, sources: sources, outputs: outputs, logger: logger)
    }

    /// - Parameters:
    ///   - sources: the inputs' status (`/v1/sources`, `/readyz`, `/metrics`).
    ///   - outputs: the outputs' status (`/metrics`): the MQTT hub, a cluster member's outputs.
    public init(backend: any APIBackend, configuration: HTTPConfiguration, events: EventBroadcaster,
                sources: @escaping @Sendable () -> [SourceStatus] = { [] }, outputs: @escaping @Sendable () -> [OutputStatus] = { [] },
                logger: Logger = Logger(label: "regionkit.http")) {
        self.backend = backend
        self.configuration = configuration
        self.events = events
        self.sources = sources
        self.outputs = outputs
        self.logger = logger
    }

    /// The router with every route and middleware (also used by in-process tests).
    public func router() -> Router<BasicRequestContext> {
        // HEAD answered as GET without the body (monitors and `curl -I` use it; it was 405).
        let router = Router(context: BasicRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.middlewares.add(SecurityHeadersMiddleware())
        router.middlewares.add(MetricsMiddleware(metrics: metrics))
        router.middlewares.add(ProblemMiddleware(logger: logger))
        router.middlewares.add(BearerTokenMiddleware(token: configuration.token.map { Array($0.utf8) }, isPublic: configuration.isPublic,
                                                          publicHosts: PublicReadHosts(allowed: configuration.allowedHosts)))
        addRegionRoutes(to: router)
        addEventRoutes(to: router)
        addStatusRoutes(to: router)
        addDashboardRoutes(to: router)
        return router
    }

    /// Serves until the task is cancelled; then stops accepting connections, ends the event
    /// streams and lets requests in flight finish (a graceful shutdown, at most
    /// `maximumGracefulShutdown`).
    /// - Parameter onListening: called with the bound port once the server accepts connections.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let configuration = self.configuration
        let serverLogger = logger
        let app = Application(
            router: router(),
            server: try Self.serverBuilder(configuration),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "regionkit",
                                                    availableConnectionsDelegate: .maximum(max(1, configuration.maxConnections), logger: serverLogger)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: serverLogger)
        var groupConfiguration = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [], logger: serverLogger)
        // A response that never ends (a stalled client on an event stream) must not hold the
        // daemon's stop open: past this the server is cancelled, its connections closed.
        groupConfiguration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdown
        let group = ServiceGroup(configuration: groupConfiguration)
        let events = self.events
        let backend = self.backend
        let feed = Task { await backend.followLog(into: events) }
        defer { feed.cancel() }
        // The group runs outside this task's cancellation: cancelling `run` asks for a graceful
        // shutdown instead of tearing the channels down mid-response.
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            events.finishAll()
            Task { await group.triggerGracefulShutdown() }
        }
        events.finishAll()
    }

    /// How long a stop waits for the requests in flight before closing their connections.
    static let maximumGracefulShutdown = Duration.seconds(10)

    /// Plain HTTP/1.1, or HTTPS when the configuration names a certificate and a key.
    static func serverBuilder(_ configuration: HTTPConfiguration) throws -> HTTPServerBuilder {
        // Hummingbird closes a connection idle for this long only between requests (a response
        // in progress, an event stream included, keeps it).
        let seconds = configuration.idleTimeout.isFinite ? min(max(configuration.idleTimeout, 0.001), 86_400) : 86_400
        // A request's body must arrive within the request timeout once its head has (a slow body
        // kept the connection otherwise; a slow head is bounded by the idle timeout).
        let requestSeconds = configuration.requestTimeout.isFinite ? min(max(configuration.requestTimeout, 0.001), 86_400) : 86_400
        let http1 = HTTPServerBuilder.http1(configuration: .init(
            additionalChannelHandlers: [RequestReadTimeout(limit: .nanoseconds(Int64(requestSeconds * 1e9)))],
            idleTimeout: .nanoseconds(Int64(seconds * 1e9))))
        guard let tls = try tlsConfiguration(configuration) else { return http1 }
        return try .tls(http1, tlsConfiguration: tls)
    }

    /// The server's TLS configuration from the certificate chain and key files (nil: plain HTTP),
    /// with errors naming the file. Also read when the configuration is (before the daemon starts
    /// its sources and hub: a bad file used to stop it only after they were up).
    static func tlsConfiguration(_ configuration: HTTPConfiguration) throws -> TLSConfiguration? {
        guard let certificateFile = configuration.tlsCertificateFile, let keyFile = configuration.tlsKeyFile else { return nil }
        let chain: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        } catch {
            throw RegionKitError(.invalidArgument, "http.tlsCertificate: cannot read a PEM certificate chain from '\(certificateFile)'", cause: error)
        }
        do {
            key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        } catch {
            // The key's contents never go into the message.
            throw RegionKitError(.invalidArgument, "http.tlsKey: cannot read a PEM private key from '\(keyFile)'")
        }
        guard !chain.isEmpty else { throw RegionKitError(.invalidArgument, "http.tlsCertificate: '\(certificateFile)' holds no certificate") }
        return TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }

    // MARK: - Helpers shared by the routes

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A JSON text written by hand (``RegionReport/listingJSON(_:changesRefused:page:)``).
    static func json(bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func jsonObject(_ object: Any, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return Response(status: status, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func text(_ text: String, contentType: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType, .cacheControl: "no-cache"], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
