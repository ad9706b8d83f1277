import Logging
import RegionKit

/// Feeds one ``ServiceSource`` into a ``MonitoringService`` in real time until cancelled. A
/// gateway file ends by itself when replayed; every other source runs until its task is cancelled
/// (a simulation that does not repeat then idles).
///
/// ```swift
/// let configuration = try ServiceConfiguration.load(path)
/// let service = MonitoringService(store: store, sources: configuration.initialSourceStatuses)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     for source in configuration.sources {
///         let runner = SourceRunner(source: source, configuration: configuration, service: service)
///         group.addTask { try await runner.run() }
///     }
///     // … cancel the group to stop
/// }
/// ```
///
/// Each kind's loop is in `SourceRunner+Kind.swift`; ``configuration`` is there for sources that
/// need a top-level block of the file (a broker, say) besides their own entry.
public struct SourceRunner: Sendable {
    public let source: ServiceSource
    /// The whole configuration the source came from.
    public let configuration: ServiceConfiguration
    public let service: MonitoringService
    public let logger: Logger
    /// The source's state and counters (for `GET /v1/sources`, `/readyz` and `/metrics`).
    public let activity: SourceActivity

    public init(source: ServiceSource, configuration: ServiceConfiguration, service: MonitoringService,
                logger: Logger = Logger(label: "regionkit.sources"), activity: SourceActivity? = nil) {
        self.source = source
        self.configuration = configuration
        self.service = service
        self.logger = logger
        self.activity = activity ?? SourceActivity(name: source.name, kind: source.kind.rawValue)
    }

    var manager: LocationManager { service.manager }

    /// Runs the source; returns when a finite source is done, throws `CancellationError` when
    /// cancelled, or the source's error when it cannot start (a bad file, an unusable device).
    public func run() async throws {
        do {
            switch source {
            case .simulator(let settings): activity.set(.up); try await runSimulator(settings)
            case .gateway(let settings): activity.set(.up); try await runGateway(settings)
            case .hci(let settings): try await runHCI(settings)
            case .gpsd(let settings): await runGPSD(settings)
            // Served together, on one broker connection, by the PresenceHub the daemon runs beside
            // its source runners; nothing to do here.
            case .mqtt: try await Self.untilCancelled()
            }
            activity.set(.finished)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            activity.set(.down, detail: "\(error)")
            throw error
        }
    }

    /// Hands a sighting to the manager, counting it.
    func ingest(_ observation: BeaconObservation) {
        activity.recordInput(at: observation.timestamp.seconds)
        manager.ingest(observation)
    }

    /// Hands a fix to the manager, counting it.
    func ingest(_ fix: LocationFix) {
        activity.recordInput(at: fix.timestamp.seconds)
        manager.ingest(fix)
    }

    /// Suspends until the current task is cancelled, then throws `CancellationError`. Nothing
    /// polls or sleeps: the wait is a stream that never yields and ends on cancellation.
    ///
    /// ```swift
    /// defer { scanner.stop() }
    /// try await SourceRunner.untilCancelled()
    /// ```
    public static func untilCancelled() async throws {
        let (stream, continuation) = AsyncStream<Never>.makeStream()
        // Keeping the continuation alive keeps the stream open; only cancellation ends the loop.
        for await _ in stream {}
        withExtendedLifetime(continuation) {}
        throw CancellationError()
    }
}
