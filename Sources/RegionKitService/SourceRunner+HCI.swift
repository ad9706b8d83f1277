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
        let scanner = BeaconScanner(specification: specification, manager: manager, configuration: configuration)
        try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
        logger.info("scanning", metadata: ["device": "\(settings.device)"])
        do {
            try await Self.untilCancelled()
        } catch {
            await scanner.stop()
            throw error
        }
    }
}
