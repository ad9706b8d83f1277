import Foundation
import RegionKitTestSupport
import RegionKitConcurrency
import RegionKit
import RegionKitHTTP
import RegionKitService
import RegionKitStore

/// A MonitoringService on a virtual clock with its HTTP server on a free loopback port.
final class TestDaemon: Sendable {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let beacon = BeaconIdentity(uuid: uuid, major: 1, minor: 1)
    static let lobby = Region.beacon(try! BeaconRegion(identifier: "lobby", uuid: uuid, major: 1))

    let path: String
    let clock: VirtualClock
    let service: MonitoringService
    let server: RegionKitServer
    let port: Int
    let task: Task<Void, any Error>
    let sources = SourceBox()
    /// The outputs `/metrics` reports (none until a test sets them).
    let outputs = LockedBox<[OutputStatus]>([])

    final class SourceBox: Sendable {
        let states = LockedBox<[SourceStatus]>([SourceStatus(name: "test", kind: "simulator", state: .up, sightings: 0)])
        func set(_ value: [SourceStatus]) { states.withLock { $0 = value } }
        var current: [SourceStatus] { states.withLock { $0 } }
    }

    static func temporaryPath() -> String {
        TestScratch.directory.appendingPathComponent("rk-http-\(UUID().uuidString)/regionkit.sqlite").path
    }

    init(path: String = TestDaemon.temporaryPath(), token: String? = "test-token", isPublic: Bool = false, allowedHosts: [String] = [],
         configured: [Region] = [TestDaemon.lobby],
         sources: [RegionKind: AuthorizationStatus] = [.beacon: .authorized, .circular: .authorized], clock: VirtualClock = VirtualClock(start: Timestamp(seconds: 1_700_000_000)),
         idleTimeout: Double = 60, requestTimeout: Double = 30, maxConnections: Int = 512, profile: MonitoringProfile = .responsive) async throws {
        self.path = path
        self.clock = clock
        let events = EventBroadcaster()
        service = MonitoringService(store: try RegionStore(path: path), profile: profile, automation: .all, clock: clock,
                                    sources: sources, onLogged: events.publish)
        try await service.start(regions: configured)
        let box = self.sources
        let outputs = self.outputs
        var configuration = HTTPConfiguration(host: "127.0.0.1", port: 0, token: token, isPublic: isPublic,
                                              maxBodyBytes: 1_024, keepAliveInterval: 0.2, idleTimeout: idleTimeout)
        configuration.requestTimeout = requestTimeout
        configuration.allowedHosts = allowedHosts
        configuration.maxConnections = maxConnections
        server = RegionKitServer(service: service, configuration: configuration, events: events, sources: { box.current },
                                 outputs: { outputs.withLock { $0 } })
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let server = self.server
        task = Task { try await server.run { port in continuation.yield(port) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw LoopbackError.malformed("server did not start") }
        self.port = port
    }

    func client(token: String? = "test-token") -> LoopbackClient { LoopbackClient(port: port, token: token) }

    /// Sightings every 0.1 s of virtual time from `from` to `to` seconds after the start.
    func sight(from: Double, to: Double, rssi: Int = -60) {
        for t in stride(from: from, to: to, by: 0.1) {
            let time = Timestamp(seconds: 1_700_000_000 + t)
            clock.advance(to: time)
            service.manager.ingest(BeaconObservation(identity: Self.beacon, rssi: rssi, measuredPower: -59, timestamp: time, scannerID: "hall"))
        }
    }

    func advance(to t: Double) { clock.advance(to: Timestamp(seconds: 1_700_000_000 + t)) }

    func stop() async throws {
        task.cancel()
        _ = await task.result
        try await service.stop()
    }
}
