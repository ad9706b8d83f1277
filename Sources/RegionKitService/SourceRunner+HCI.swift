import RegionKit
import RegionKitBluetooth
import RegionKitConcurrency

extension SourceRunner {
    /// Scans through the controller until cancelled. The scanner reports its availability (to
    /// ``availability`` when the daemon judges several sources, else to the manager:
    /// `monitoringDidFail` while the controller is gone) and reconnects by itself once scanning.
    /// A controller that cannot be brought to scanning at start (unreachable, restarting) is
    /// tried again with the scanner's reconnect backoff until it answers; only a setting that
    /// cannot work (an unparseable device, parameters the controller refuses, missing
    /// permissions) fails the source for good.
    func runHCI(_ settings: ServiceSource.HCI) async throws {
        let specification: HCITransportSpecification
        do {
            specification = try HCITransportSpecification(parsing: settings.device)
        } catch {
            throw RegionKitError(.invalidArgument, "hci source '\(settings.device)': \(error)")
        }
        var configuration = BeaconScanner.Configuration()
        configuration.scannerID = settings.scannerID
        configuration.beaconLayouts = try settings.beaconLayouts()
        let policy = configuration.reconnect
        var attempt = 0
        // Counters of the scanners replaced so far (each start attempt is a fresh scanner).
        var earlier = SourceActivity.Counters(inputs: 0, reconnects: 0, decodeErrors: [:])
        while true {
            try Task.checkCancellation()
            attempt += 1
            // The scanner's own availability is the source's; the "stopped" it reports when the
            // daemon stops it is not a failure and is kept out of the status and the event log.
            let stopping = StopFlag()
            let scanner = BeaconScanner(specification: specification, manager: manager, configuration: configuration,
                                        onSourceStatus: { [activity] status in
                guard !stopping.isSet else { return }
                report(status, for: .beacon)
                switch status {
                case .authorized: activity.set(.up)
                case .denied(let reason), .restricted(let reason): activity.set(.connecting, detail: reason)
                case .notDetermined: activity.set(.connecting)
                }
            })
            // The scanner counts its own sightings, restarts and malformed events.
            let base = earlier
            activity.track {
                let statistics = scanner.statistics
                var decodeErrors = base.decodeErrors
                if statistics.malformedEvents > 0 { decodeErrors["malformedEvent", default: 0] += statistics.malformedEvents }
                return SourceActivity.Counters(inputs: base.inputs + statistics.observations,
                                               reconnects: base.reconnects + max(0, statistics.scanningStarts - 1),
                                               decodeErrors: decodeErrors)
            }
            do {
                try await scanner.start()
            } catch where !Self.isRetryable(error) {
                throw error.regionKitError
            } catch {
                earlier = SourceActivity.Counters(inputs: base.inputs + scanner.statistics.observations,
                                                  reconnects: base.reconnects + 1, decodeErrors: base.decodeErrors)
                if attempt == 1 {
                    logger.warning("Bluetooth controller unavailable; retrying", metadata: ["device": "\(settings.device)", "error": "\(error.message)"])
                }
                activity.set(.connecting, detail: "\(error.message) (attempt \(attempt); retrying)")
                try await Task.sleep(for: .milliseconds(Int64(policy.delay(beforeAttempt: attempt) * 1000)))
                continue
            }
            logger.info("scanning", metadata: ["device": "\(settings.device)"])
            // Later failures: the scanner reports them (above) and reconnects by itself.
            do {
                try await Self.untilCancelled()
            } catch {
                stopping.set()
                await scanner.stop()
                throw error
            }
        }
    }

    /// Set once the daemon stops the scanner (shared with the scanner's status callback).
    final class StopFlag: Sendable {
        private let value = LockedBox(false)
        var isSet: Bool { value.withLock { $0 } }
        func set() { value.withLock { $0 = true } }
    }

    /// Whether a failure to start can go away by itself (the controller is unreachable, restarting,
    /// timing out) rather than needing a change of settings or permissions.
    static func isRetryable(_ error: BluetoothError) -> Bool {
        switch error.code {
        case .invalidConfiguration, .unsupported, .permissionDenied: false
        default: true
        }
    }
}
