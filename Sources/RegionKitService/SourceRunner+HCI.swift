import RegionKit
import RegionKitBluetooth

extension SourceRunner {
    /// Scans through the controller until cancelled. The scanner reports availability to the
    /// manager (`monitoringDidFail` while the controller is gone) and reconnects by itself.
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
        let scanner = BeaconScanner(specification: specification, manager: manager, configuration: configuration)
        // The scanner counts its own sightings, restarts and malformed events.
        activity.track {
            let statistics = scanner.statistics
            return SourceActivity.Counters(inputs: statistics.observations, reconnects: max(0, statistics.scanningStarts - 1),
                                           decodeErrors: statistics.malformedEvents > 0 ? ["malformedEvent": statistics.malformedEvents] : [:])
        }
        try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
        activity.set(.up)
        logger.info("scanning", metadata: ["device": "\(settings.device)"])
        do {
            try await Self.untilCancelled()
        } catch {
            await scanner.stop()
            throw error
        }
    }
}
