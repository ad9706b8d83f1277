import Logging
import Synchronization
import RegionKitConcurrency
import RegionKit
import RegionKitCore
import RegionKitBluetooth
import RegionKitGateway
import RegionKitMQTT

/// The MQTT sources' receiving end: routes each message to the decoder of the source whose topic
/// filter matches it, feeds the sightings to the manager with their scanner, and counts the rest.
/// A damaged message never stops the stream: it is counted by kind and logged once per kind and
/// source (with the topic and the reason); the good messages around it are processed.
///
/// With `batching`, the sightings of the messages handled between two ``flush()`` calls go to
/// the manager together (the hub flushes after each read from the broker's socket): the engine's
/// events for them are delivered, and logged, as one batch — one store transaction instead of one
/// per message.
///
/// ```swift
/// let ingest = MQTTSightingIngest(sources: [.init(format: .espresense)], manager: manager, logger: logger)
/// ingest.handle(topic: "espresense/devices/iBeacon:…-1-2/kitchen", payload: bytes)
/// ingest.statistics.sightings   // 1
/// ```
public final class MQTTSightingIngest: Sendable {
    /// Counters since start.
    public struct Statistics: Hashable, Sendable {
        public var messages = 0
        public var sightings = 0
        /// Well-formed messages that are not iBeacon sightings, by reason.
        public var ignored: [String: Int] = [:]
        /// Damaged messages by kind.
        public var rejected: [SightingMessageError.Kind: Int] = [:]
        /// Messages on a topic no source's filter matches (none expected).
        public var unrouted = 0
        /// Telemetry messages (Eddystone-TLM through Theengs) kept for their transmitter.
        public var telemetry = 0
        /// Scanner status messages (`ScannerStatusMessage`) applied, retained ones included.
        public var statuses = 0
        /// Status changes not logged (beyond ``MQTTSightingIngest/statusLogsPerMinute``).
        public var unloggedStatusChanges = 0
        /// Sightings dropped as late: timed more than ``MQTTSightingIngest/lateSightingLimit``
        /// before their message arrived (a RegionKit batch's `dt`).
        public var late = 0

        public var rejectedTotal: Int { rejected.values.reduce(0, +) }

        /// What `GET /v1/sources` and `/metrics` count as a source's decode errors: the rejected
        /// messages by kind, and the late sightings as `late`.
        public var decodeErrors: [String: Int] {
            var errors = Dictionary(uniqueKeysWithValues: rejected.map { ($0.key.rawValue, $0.value) })
            if late > 0 { errors["late", default: 0] += late }
            return errors
        }
    }

    struct Route: Sendable {
        var filter: String
        var decoder: SightingMessageDecoder
    }

    /// A source's scanners' status filter (``MQTTSourceConfiguration/statusFilter``).
    struct StatusRoute: Sendable {
        var filter: String
        /// The source's configured scanner, which every status on the filter is about.
        var scanner: String?
        /// The scanner level is an encoded name (`SightingMessageFormat.encodesScannerNames`).
        var encodedNames = false
    }

    let routes: [Route]
    let statusRoutes: [StatusRoute]
    /// The status last said by each scanner, to log changes only (a retained status comes again
    /// at every subscription); emptied when a new scanner would exceed ``telemetryCapacity``.
    /// With the changes logged in the current minute and those left unlogged in it.
    private let statusLog = LockedBox<(last: [String: Bool], minute: Double, logged: Int, unlogged: Int)>(([:], -.infinity, 0, 0))
    /// Status changes logged a minute at most: anyone may publish on the status topics, and a
    /// flood of invented room names must not flood the log (the rest are counted, and said so).
    public static let statusLogsPerMinute = 20
    let manager: LocationManager
    let logger: Logger
    private let state = LockedBox<(statistics: Statistics, logged: Set<String>, telemetry: [String: (frame: EddystoneTelemetry, heardAt: Timestamp)])>((Statistics(), [], [:]))
    /// Transmitters whose telemetry is kept; the map is emptied when a new one would exceed it
    /// (as `BeaconReportPipeline.telemetryCapacity`).
    public static let telemetryCapacity = 4096
    /// Seconds (manager clock) after a transmitter's last telemetry message that it is no longer
    /// attached to its sightings, and dropped: as `BeaconReportPipeline.telemetryMaximumAge`.
    public let telemetryMaximumAge: Double

    /// Whether sightings wait for ``flush()`` (see the type's documentation).
    public let batching: Bool
    /// Sightings handled since the last ``flush()`` (with ``batching``).
    private let batch = LockedBox<[BeaconObservation]>([])
    /// A batch this large goes to the manager without waiting for ``flush()``.
    public static let batchLimit = 4_096
    /// Seconds before its message's arrival that a sighting may be timed (a RegionKit batch's
    /// `dt`; RegionKit's scanners send every 100 ms) and still be taken. An older one says where
    /// a beacon was, not where it is, and the engine takes every sighting as current: a batch
    /// sighting 20 s old re-entered a region the beacon had left since, with a second exit later.
    /// Dropped and counted (``Statistics/late``); the first of a source is logged.
    public static let lateSightingLimit = ScannerBatch.maximumLateness

    public init(sources: [MQTTSourceConfiguration], manager: LocationManager, logger: Logger,
                telemetryMaximumAge: Double = BeaconReportPipeline.defaultTelemetryMaximumAge, batching: Bool = false) {
        self.batching = batching
        self.telemetryMaximumAge = telemetryMaximumAge
        routes = sources.map { Route(filter: $0.topicFilter, decoder: SightingMessageDecoder(format: $0.format, scannerOverride: $0.scanner)) }
        statusRoutes = sources.compactMap { source in source.statusFilter.map { StatusRoute(filter: $0, scanner: source.scanner, encodedNames: source.format.encodesScannerNames) } }
        self.manager = manager
        self.logger = logger
        cycles = LockedBox(ScannerCycleWatch(ceiling: manager.profile.exitDetector.maximumSilence))
    }

    /// Scanners that report in cycles longer than the exit detector's longest silence (logged once each).
    private let cycles: LockedBox<ScannerCycleWatch>

    /// The sighting topic filters to subscribe to (one per source, duplicates removed).
    public var topicFilters: [String] {
        var seen = Set<String>()
        return routes.map(\.filter).filter { seen.insert($0).inserted }
    }

    /// The scanners' status filters to subscribe to (``MQTTSourceConfiguration/statusFilter``,
    /// duplicates removed): apart from ``topicFilters``, because a refused one is no outage of
    /// the sightings.
    public var statusFilters: [String] {
        var seen = Set<String>()
        return statusRoutes.map(\.filter).filter { seen.insert($0).inserted }
    }

    /// The status route `topic` belongs to: checked before the sighting routes, whose filter may
    /// cover it (`espresense/#`).
    func statusRoute(for topic: String) -> StatusRoute? {
        statusRoutes.isEmpty ? nil : statusRoutes.first { MQTTTopicFilter.matches(filter: $0.filter, topic: topic) }
    }

    /// Applies one scanner status message (retained ones too: a retained status is the scanner's
    /// state now). The sightings batched before it go to the manager first, so that they are
    /// heard before the status.
    func handleStatus(topic: String, payload: [UInt8], route: StatusRoute) {
        do {
            let status = try ScannerStatusMessage.decode(topic: topic, payload: payload, filter: route.filter, scanner: route.scanner, encodedNames: route.encodedNames)
            flush()
            state.withLock {
                $0.statistics.messages += 1
                $0.statistics.statuses += 1
            }
            manager.setScannerStatus(status.scanner, online: status.online)
            let now = manager.clock.now.seconds
            let (log, unloggedBefore) = statusLog.withLock { state -> (Bool, Int) in
                guard state.last[status.scanner] != status.online else { return (false, 0) }
                if state.last[status.scanner] == nil && state.last.count >= Self.telemetryCapacity { state.last.removeAll(keepingCapacity: true) }
                state.last[status.scanner] = status.online
                var unlogged = 0
                if !(now - state.minute < 60) {
                    unlogged = state.unlogged
                    state = (state.last, now, 0, 0)
                }
                guard state.logged < Self.statusLogsPerMinute else {
                    state.unlogged += 1
                    self.state.withLock { $0.statistics.unloggedStatusChanges += 1 }
                    return (false, unlogged)
                }
                state.logged += 1
                return (true, unlogged)
            }
            if unloggedBefore > 0 {
                logger.warning("scanner status changes not logged in the last minute (more than \(Self.statusLogsPerMinute) a minute)",
                               metadata: ["unlogged": "\(unloggedBefore)"])
            }
            if log {
                logger.info(status.online ? "scanner online" : "scanner offline: its beacons are held for it",
                            metadata: ["scanner": "\(status.scanner.prefix(128))", "topic": "\(topic.prefix(200))"])
            }
        } catch {
            reject(error, topic: topic, filter: route.filter, what: "scanner status")
        }
    }

    /// Counts a rejected message by kind; logs the first of its kind on its filter.
    private func reject(_ error: SightingMessageError, topic: String, filter: String, what: String, format: SightingMessageFormat? = nil) {
        let first = state.withLock { state -> Bool in
            state.statistics.messages += 1
            state.statistics.rejected[error.kind, default: 0] += 1
            return state.logged.insert("\(error.kind)|\(filter)").inserted
        }
        if first {
            var metadata: Logger.Metadata = ["topic": "\(topic.prefix(200))", "kind": "\(error.kind)", "error": "\(error.message)"]
            if let format { metadata["format"] = "\(format.rawValue)" } else { metadata["filter"] = "\(filter)" }
            logger.warning("rejected an MQTT \(what) message (further ones of this kind on this source are only counted)", metadata: metadata)
        }
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Whether ``stop()`` was called: sighting messages are dropped from then on.
    private let stopped = Atomic<Bool>(false)

    /// Stops feeding the manager: every later sighting message is dropped (not counted). The
    /// daemon calls it before its stop waits for the engine's queue, so that the broker does not
    /// keep adding to what the stop waits for.
    public func stop() { stopped.store(true, ordering: .relaxed) }

    /// Whether ``stop()`` was called.
    public var isStopped: Bool { stopped.load(ordering: .relaxed) }

    /// Hands the sightings handled since the last call to the manager, in one call (with
    /// ``batching``; nothing otherwise). After ``stop()`` they are dropped, as a message would be.
    public func flush() {
        guard batching else { return }
        var taken: [BeaconObservation] = []
        batch.withLock { swap(&taken, &$0) }
        guard !taken.isEmpty, !stopped.load(ordering: .relaxed) else { return }
        manager.ingest(contentsOf: taken)
    }

    /// The transmitter a message is about: its topic's last level (Theengs: the address), as a
    /// key of its own (a `Substring` kept in the telemetry map would keep its whole topic, up to
    /// the packet limit, alive); `nil` when longer than ``maximumTransmitterKey`` bytes, which no
    /// address is: such a transmitter's telemetry is not kept.
    static func transmitter(_ topic: String) -> String? {
        let level = topic.utf8.lastIndex(of: UInt8(ascii: "/")).map { topic[topic.utf8.index(after: $0)...] } ?? topic[...]
        return level.utf8.count <= maximumTransmitterKey ? String(level) : nil
    }

    /// The longest topic level, bytes, kept as a transmitter's telemetry key.
    static let maximumTransmitterKey = 64

    /// Why a retained message is not ingested (``Statistics/ignored``).
    public static let retainedReason = "retained (stored by the broker, not heard now)"

    /// Counts a message the MQTT client skipped for its size (over the maximum incoming packet
    /// size: `MQTTConnectionEvent.messageSkipped(topic:size:retained:)`) on a topic this ingest
    /// subscribes to as rejected, `tooLarge` (the first of a source is logged, as for any rejection);
    /// a retained one as ignored (``retainedReason``), as it would have been.
    public func skipped(topic: String, size: Int, retained: Bool) {
        if let status = statusRoute(for: topic) {
            reject(SightingMessageError(.tooLarge, "status of \(size) bytes exceeds the maximum incoming packet size: skipped"),
                   topic: topic, filter: status.filter, what: "scanner status")
            return
        }
        guard let route = routes.first(where: { MQTTTopicFilter.matches(filter: $0.filter, topic: topic) }) else {
            state.withLock { $0.statistics.unrouted += 1 }
            return
        }
        let kind = SightingMessageError.Kind.tooLarge
        let first = state.withLock { state -> Bool in
            state.statistics.messages += 1
            if retained {
                state.statistics.ignored[Self.retainedReason, default: 0] += 1
                return false
            }
            state.statistics.rejected[kind, default: 0] += 1
            return state.logged.insert("\(kind)|\(route.filter)").inserted
        }
        if first {
            logger.warning("rejected an MQTT sighting message (further ones of this kind on this source are only counted)",
                           metadata: ["topic": "\(topic.prefix(200))", "format": "\(route.decoder.format.rawValue)", "kind": "\(kind)",
                                      "error": "message of \(size) bytes exceeds the maximum incoming packet size: skipped"])
        }
    }

    /// Handles one received message (called in arrival order). A `retained` message is the
    /// broker's stored copy of an earlier one, delivered at every subscription: stamped with its
    /// arrival time it would bring its beacon back inside at every reconnection and restart, so it
    /// is counted as ignored (``retainedReason``) and not ingested.
    ///
    /// A scanner's status (``statusFilters``) is applied, retained or not: it is the scanner's
    /// state now (`LocationManager.setScannerStatus(_:online:)`).
    public func handle(topic: String, payload: [UInt8], retained: Bool = false) {
        guard !stopped.load(ordering: .relaxed) else { return }
        if let status = statusRoute(for: topic) {
            handleStatus(topic: topic, payload: payload, route: status)
            return
        }
        guard let route = routes.first(where: { MQTTTopicFilter.matches(filter: $0.filter, topic: topic) }) else {
            state.withLock { $0.statistics.unrouted += 1 }
            return
        }
        if retained {
            state.withLock {
                $0.statistics.messages += 1
                $0.statistics.ignored[Self.retainedReason, default: 0] += 1
            }
            return
        }
        let now = manager.clock.now
        do {
            switch try route.decoder.decode(topic: topic, payload: payload, receivedAt: now) {
            case .sightings(var observations):
                let heard = observations.count
                if let scanner = observations.first?.scannerID { noteCycle(of: scanner, at: now, filter: route.filter, format: route.decoder.format) }
                observations.removeAll { now - $0.timestamp > Self.lateSightingLimit }
                let late = heard - observations.count
                let kept = state.withLock { state -> EddystoneTelemetry? in
                    state.statistics.messages += 1
                    state.statistics.sightings += observations.count
                    guard !state.telemetry.isEmpty, route.decoder.format == .theengs else { return nil }
                    guard let key = Self.transmitter(topic), let kept = state.telemetry[key] else { return nil }
                    guard now - kept.heardAt <= telemetryMaximumAge else {
                        state.telemetry[key] = nil
                        return nil
                    }
                    return kept.frame
                }
                // (Only batches can be late: the count takes the lock again then only.)
                let firstLate = late > 0 && state.withLock { state in
                    state.statistics.late += late
                    return state.logged.insert("late|\(route.filter)").inserted
                }
                if firstLate {
                    logger.warning("dropped sightings timed more than \(Self.lateSightingLimit) s before their message arrived: they tell where a beacon was, not where it is (further ones on this source are only counted)",
                                   metadata: ["topic": "\(topic.prefix(200))", "filter": "\(route.filter)", "late": "\(late)"])
                }
                if let kept {
                    for index in observations.indices where observations[index].telemetry == nil { observations[index].telemetry = kept }
                }
                if batching {
                    let full = batch.withLock { batch in
                        batch += observations
                        return batch.count >= Self.batchLimit
                    }
                    if full { flush() }
                } else {
                    manager.ingest(contentsOf: observations)
                }
            case .telemetry(let frame):
                state.withLock {
                    $0.statistics.messages += 1
                    $0.statistics.telemetry += 1
                    guard let key = Self.transmitter(topic) else { return }
                    if $0.telemetry[key] == nil && $0.telemetry.count >= Self.telemetryCapacity { $0.telemetry.removeAll(keepingCapacity: true) }
                    $0.telemetry[key] = (frame, now)
                }
            case .ignored(let reason):
                state.withLock {
                    $0.statistics.messages += 1
                    $0.statistics.ignored[reason, default: 0] += 1
                }
            }
        } catch {
            reject(error, topic: topic, filter: route.filter, what: "sighting", format: route.decoder.format)
        }
    }

    /// Logs, once per scanner, that it reports in cycles too slow for the exit detector.
    private func noteCycle(of scanner: String, at now: Timestamp, filter: String, format: SightingMessageFormat) {
        guard let (silence, ceiling) = cycles.withLock({ watch in watch.heard(scanner, at: now.seconds).map { ($0, watch.ceiling) } }) else { return }
        logger.warning("""
            scanner reports in slow cycles: silent up to \(Int(silence.rounded())) s between reports, \(ScannerCycleWatch.burstsBeforeWarning) times in a row, \
            longer than the longest silence the exit detector allows (\(ceiling.compactDescription) s): beacons only it hears leave and come back every cycle. \
            \(Self.cycleRemedy(format)), or set minimumExitSilence to about twice the cycle in the run configuration
            """, metadata: ["scanner": "\(scanner)", "filter": "\(filter)"])
    }

    /// How to shorten a scanner's cycle, for the tools that publish `format`.
    static func cycleRemedy(_ format: SightingMessageFormat) -> String {
        switch format {
        case .theengs:
            #"Shorten its scan cycle (OpenMQTTGateway: {"interval":6000} on home/<gateway>/commands/MQTTtoBT/config; Theengs Gateway: its time between scans)"#
        case .espresense, .regionkit:
            "Shorten its scan or publish cycle"
        }
    }
}
