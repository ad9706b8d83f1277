import Foundation
import Prometheus
import RegionKitCore
import RegionKitService
import RegionKitStore
import Synchronization

/// The daemon's Prometheus metrics (`GET /metrics`), in a registry of its own (no global bootstrap).
///
/// Request counts and latencies are recorded as requests are served; the rest is read at scrape
/// time from what already counts it: the event log (events by type), the hook deliveries (by
/// status, failed attempts), the service (persistence failures, regions by state) and the sources
/// (sightings, reconnects, decode errors by kind).
///
/// ```swift
/// let text = try await metrics.scrape(backend: SingleDaemonBackend(service: service), sources: sourceStatus(), sseClients: 0)
/// ```
public final class ServerMetrics: Sendable {
    public let registry = PrometheusCollectorRegistry()
    private let buckets: [Duration] = [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10),
                                       .milliseconds(50), .milliseconds(100), .milliseconds(500), .seconds(1)]

    /// The labels of the outputs the last scrapes reported: one gone since (a cluster member that
    /// lost the outputs lease) is reported disconnected, its gauges of the moment removed, instead
    /// of frozen at their last values.
    private let reportedOutputs = Mutex<Set<[String]>>([])

    /// The scanners the last scrapes reported, and whether with a last sighting: one no longer
    /// listed (silent for the hour, renamed, past the series limit) has its series removed instead
    /// of frozen at their last values.
    private let reportedScanners = Mutex<[String: Bool]>([:])

    /// Per-scanner series are kept for at most this many scanners, the most recently heard
    /// (``APIBackend/scanners(limit:)``): a flood of invented scanner names costs a scrape no more
    /// than this. `regionkit_scanners` counts them all.
    public static let scannerSeriesLimit = 1_000

    public init() {}

    func recordRequest(route: String, method: String, status: Int, duration: Duration) {
        registry.makeCounter(descriptor: Self.name("regionkit_http_requests_total", "HTTP requests served"),
                             labels: [("route", route), ("method", method), ("status", "\(status)")]).increment()
        registry.makeDurationHistogram(descriptor: Self.name("regionkit_http_request_duration_seconds", "Time to produce the response head"),
                                       labels: [("route", route)], buckets: buckets).record(duration)
    }

    /// Runs a store operation, recording its latency under `operation`.
    func timedStore<T>(_ operation: String, _ body: () async throws -> T) async rethrows -> T {
        let clock = ContinuousClock()
        let start = clock.now
        defer {
            registry.makeDurationHistogram(descriptor: Self.name("regionkit_store_operation_duration_seconds",
                                                                 "Latency of store operations made by the HTTP server and its probes"),
                                           labels: [("operation", operation)], buckets: buckets).record(clock.now - start)
        }
        return try await body()
    }

    private func counter(_ name: String, _ labels: [(String, String)], _ value: Int, help: String) {
        let counter = registry.makeCounter(descriptor: Self.name(name, help), labels: labels)
        counter.reset()
        counter.increment(by: Int64(value))
    }

    private func counter(_ name: String, _ labels: [(String, String)], _ value: Double, help: String) {
        let counter = registry.makeCounter(descriptor: Self.name(name, help), labels: labels)
        counter.reset()
        counter.increment(by: value)
    }

    private func gauge(_ name: String, _ labels: [(String, String)], _ value: Double, help: String) {
        registry.makeGauge(descriptor: Self.name(name, help), labels: labels).set(value)
    }

    static func name(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)   // no unit suffix
    }

    /// Reads the current values and renders the registry in the Prometheus text format.
    func scrape(backend: any APIBackend, sources: [SourceStatus], outputs: [OutputStatus] = [], sseClients: Int) async throws -> String {
        let eventCounts = try await timedStore("event_counts") { try await backend.store.eventCounts() }
        for (type, count) in eventCounts {
            counter("regionkit_events_total", [("type", type)], count, help: "Events durably logged, by type")
        }
        let deliveries = try await timedStore("delivery_counts") { try await backend.store.deliveryCounts() }
        for status in ["pending", "delivered", "failed", "dropped"] {
            gauge("regionkit_hook_deliveries", [("status", status)], Double(deliveries.byStatus[status] ?? 0), help: "Hook deliveries by status")
        }
        counter("regionkit_hook_delivery_failed_attempts_total", [], deliveries.failedAttempts, help: "Hook delivery attempts that failed")
        if let failures = backend.persistenceFailures {
            counter("regionkit_persistence_failures_total", [], failures, help: "Events that could not be written to the store")
        }
        let byState = try await timedStore("region_states") { try await backend.regionCountsByState() }
        for (state, count) in byState {
            gauge("regionkit_regions", [("state", state)], Double(count), help: "Monitored regions by state")
        }
        gauge("regionkit_sse_clients", [], Double(sseClients), help: "Connected event-stream clients")
        gauge("regionkit_scanners_offline", [], Double(backend.offlineScanners.count),
              help: "Scanners that said they are offline (their beacons are held in their regions and rooms, up to 120 s)")
        record(scanners: backend.scanners(limit: Self.scannerSeriesLimit))
        for member in try await backend.memberGauges() {
            gauge(member.name, [], member.value, help: member.help)
        }
        for source in sources {
            let labels = [("source", source.name), ("kind", source.kind)]
            counter("regionkit_source_sightings_total", labels, source.sightings, help: "Sightings and fixes ingested, by source")
            counter("regionkit_source_reconnects_total", labels, source.reconnects, help: "Reconnections of a source")
            gauge("regionkit_source_up", labels, source.state == .up ? 1 : 0, help: "1 when the source is up")
            if let pauses = source.readPauses {
                counter("regionkit_source_read_pauses_total", labels, pauses, help: "Times reads from a source were held back because the event log was behind")
            }
            if let seconds = source.readPausedSeconds {
                counter("regionkit_source_read_paused_seconds_total", labels, seconds, help: "Seconds reads from a source have been held back because the event log was behind")
            }
            if let paused = source.readPaused {
                gauge("regionkit_source_read_paused", labels, paused ? 1 : 0, help: "1 while reads from a source are held back because the event log is behind")
            }
            for (kind, count) in source.decodeErrors {
                counter("regionkit_source_decode_errors_total", labels + [("error", kind)], count, help: "Inputs that could not be decoded, by kind")
            }
        }
        // How far behind the log each output is: read once for all of them.
        let last = outputs.isEmpty ? nil : try await timedStore("last_event_id") { try await backend.store.lastEventID() }
        // Under one lock, as the scanners' series (record(scanners:)).
        reportedOutputs.withLock { reported in
            if let last { for output in outputs { record(output, lastEventID: last) } }
            let current = Set(outputs.map { [$0.name, $0.kind] })
            for labels in reported.subtracting(current) { recordGone(output: labels[0], kind: labels[1]) }
            reported = current
        }
        return registry.emitToString()
    }

    static let connectedHelp = "1 while the output is connected (its broker)"
    static let behindHelp = "Logged events the output has not published yet"
    static let announcedHelp = "Beacons with Home Assistant entities"

    static let scannerOnlineHelp = "1 unless the scanner said it is offline (its status topic: a room node's status, a gateway's will)"
    static let scannerLastSightingHelp = "Unix time of the scanner's last sighting (alert on time() minus it)"
    static let scannerRateHelp = "Sightings a second the scanner reports, every beacon together, over about 10 s"
    static let scannerRoomHelp = "Beacons placed in the scanner's room now"

    /// The scanners of `snapshot` (``ScannerReport``), a series each labelled with its name, and
    /// how many are listed in all; the series of those no longer listed removed.
    private func record(scanners snapshot: ScannerSnapshot) {
        gauge("regionkit_scanners", [], Double(snapshot.total),
              help: "Scanners heard within the hour or offline now (series of their own for the \(Self.scannerSeriesLimit) most recently heard)")
        // Under the lock from the first series set to the last one removed: two scrapes at once
        // (two Prometheus servers) could otherwise interleave, one removing a scanner's series
        // between the other's setting and its record of it, which then lists it no more.
        reportedScanners.withLock { reported in
            var current: [String: Bool] = [:]
            for scanner in snapshot.scanners {
                let labels = [("scanner", scanner.name)]
                gauge("regionkit_scanner_online", labels, scanner.status == ScannerReport.offline ? 0 : 1, help: Self.scannerOnlineHelp)
                gauge("regionkit_scanner_sightings_per_second", labels, scanner.sightingsPerSecond, help: Self.scannerRateHelp)
                gauge("regionkit_scanner_beacons_in_room", labels, Double(scanner.beaconsInRoom), help: Self.scannerRoomHelp)
                if let heard = scanner.lastHeard {
                    gauge("regionkit_scanner_last_sighting_timestamp_seconds", labels, heard, help: Self.scannerLastSightingHelp)
                }
                current[scanner.name] = scanner.lastHeard != nil
            }
            for (name, heard) in reported {
                let labels = [("scanner", name)]
                var gone: [(String, String)] = []
                if current[name] == nil {
                    gone = [("regionkit_scanner_online", Self.scannerOnlineHelp), ("regionkit_scanner_sightings_per_second", Self.scannerRateHelp),
                            ("regionkit_scanner_beacons_in_room", Self.scannerRoomHelp)]
                }
                if heard, current[name] != true { gone.append(("regionkit_scanner_last_sighting_timestamp_seconds", Self.scannerLastSightingHelp)) }
                for (metric, help) in gone { registry.unregisterGauge(registry.makeGauge(descriptor: Self.name(metric, help), labels: labels)) }
            }
            reported = current
        }
    }

    /// An output no longer run by this process: disconnected, no backlog or announcement count of its own.
    private func recordGone(output: String, kind: String) {
        let labels = [("output", output), ("kind", kind)]
        gauge("regionkit_output_connected", labels, 0, help: Self.connectedHelp)
        // (The help texts as they were registered: the registry refuses another for one name.)
        for (name, help) in [("regionkit_output_events_behind", Self.behindHelp), ("regionkit_homeassistant_beacons_announced", Self.announcedHelp)] {
            registry.unregisterGauge(registry.makeGauge(descriptor: Self.name(name, help), labels: labels))
        }
    }

    /// One output's series (``OutputStatus``), labelled with its name and kind.
    private func record(_ output: OutputStatus, lastEventID: Int64) {
        let labels = [("output", output.name), ("kind", output.kind)]
        gauge("regionkit_output_connected", labels, output.connected ? 1 : 0, help: Self.connectedHelp)
        counter("regionkit_output_events_published_total", labels, output.eventsPublished, help: "Logged events the output published (acknowledged)")
        if let cursor = output.cursor {
            // Events logged but not handed on yet: grows while the broker is unreachable.
            gauge("regionkit_output_events_behind", labels, Double(max(0, lastEventID - cursor)), help: Self.behindHelp)
        }
        counter("regionkit_output_connections_total", labels, output.connections, help: "Connections the output made (its first included)")
        counter("regionkit_output_events_unpublishable_total", labels, output.eventsUnpublishable, help: "Events with a message that can never be published (left out)")
        if let answered = output.lateWillsAnswered {
            counter("regionkit_output_late_wills_answered_total", labels, answered,
                    help: "Online statuses published to answer an earlier connection's will the broker delivered late")
        }
        guard let homeAssistant = output.homeAssistant else { return }
        counter("regionkit_homeassistant_discovery_rounds_total", labels, homeAssistant.discoveryRounds, help: "Home Assistant discovery rounds sent")
        gauge("regionkit_homeassistant_beacons_announced", labels, Double(homeAssistant.announcedBeacons), help: Self.announcedHelp)
        counter("regionkit_homeassistant_beacons_unannounced_total", labels, homeAssistant.unannouncedBeacons,
                help: "Beacon placements left without Home Assistant entities: the limit (maximumBeacons) was reached")
        counter("regionkit_homeassistant_beacons_forgotten_total", labels, homeAssistant.forgottenBeacons,
                help: "Beacons dismissed because their devices were deleted in Home Assistant")
        counter("regionkit_homeassistant_beacons_adopted_total", labels, homeAssistant.adoptedBeacons,
                help: "Beacons with entities on the broker that were not recorded as announced, counted as announced")
    }
}
