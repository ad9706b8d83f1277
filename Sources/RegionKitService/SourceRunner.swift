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
    /// Where the source's availability goes (nil: straight to the manager, as when it is the only source).
    public let availability: SourceAvailability?

    /// - Parameters:
    ///   - activity: its ``SourceActivity/status`` name is the source's name in ``availability``.
    ///   - availability: judges this source beside the others (the daemon); nil sets the manager's
    ///     status for the source's kinds directly.
    public init(source: ServiceSource, configuration: ServiceConfiguration, service: MonitoringService,
                logger: Logger = Logger(label: "regionkit.sources"), activity: SourceActivity? = nil,
                availability: SourceAvailability? = nil) {
        self.source = source
        self.configuration = configuration
        self.service = service
        self.logger = logger
        self.activity = activity ?? SourceActivity(name: source.name, kind: source.kind.rawValue)
        self.availability = availability
    }

    /// Whether the source can deliver for `kind` now.
    func report(_ status: AuthorizationStatus, for kind: RegionKind) {
        if let availability {
            availability.report(status, for: kind, from: activity.name)
        } else {
            manager.setSourceStatus(status, for: kind)
        }
    }

    var manager: LocationManager { service.manager }

    /// Runs the source; returns when a finite source is done, throws `CancellationError` when
    /// cancelled, or the source's error when it fails for good (a bad or damaged file, an unknown
    /// scenario, a device specification or setting that cannot work). A device that is merely
    /// unreachable (a controller, gpsd) is retried until cancelled. On failure the source's kinds
    /// are reported unavailable (``availability``) and its activity is `down` with the reason.
    public func run() async throws {
        do {
            switch source {
            case .simulator(let settings): activity.set(.up); try await runSimulator(settings)
            case .gateway(let settings): activity.set(.up); try await runGateway(settings)
            case .hci(let settings): try await runHCI(settings)
            case .gpsd(let settings): await runGPSD(settings); try Task.checkCancellation()
            // Served together, on one broker connection, by the PresenceHub the daemon runs beside
            // its source runners; nothing to do here.
            case .mqtt: try await Self.untilCancelled()
            }
            activity.set(.finished)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            for kind in source.initialStatuses.keys {
                report(.restricted(reason: "source \(activity.name) failed: \(Self.reason(error))"), for: kind)
            }
            activity.set(.down, detail: Self.reason(error))
            throw error
        }
    }

    /// An error's message without its code prefix (for status details and reasons).
    static func reason(_ error: any Error) -> String {
        (error as? RegionKitError)?.message ?? "\(error)"
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
