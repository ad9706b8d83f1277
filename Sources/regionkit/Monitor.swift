import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitSimulation
import Synchronization

struct Monitor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Monitor beacon regions live through an HCI controller (and range them with --range).",
        discussion: """
        Prints the same events as `simulate` (with --json, the same JSON lines; `t` is seconds since start). \
        The state of each region is requested at start (an app started inside learns it is inside, without \
        didEnterRegion, as in Core Location). If the controller fails, every region gets monitoringDidFail; the \
        scanner reconnects with backoff and the regions are registered again (spec §5 retry).
        """
    )

    @OptionGroup var controller: ControllerOptions

    @Option(name: .customLong("region"), help: "A beacon region ID:UUID[:MAJOR[:MINOR]] (repeatable, at least one).")
    var regionSpecifiers: [String] = []

    @Flag(help: "Also range the beacons of every region (didRangeBeacons every second).")
    var range = false

    @Flag(help: "Print one JSON object per line instead of a timeline.")
    var json = false

    @Option(help: "Monitoring profile: corelocation or responsive.")
    var profile: ProfileOption?

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Option(help: "Record every HCI packet to this btsnoop file (replay it with `regionkit replay FILE`).")
    var capture: String?

    @Flag(help: "Also print authorization changes and ranging failures in --json output.")
    var allEvents = false

    func validate() throws {
        guard !regionSpecifiers.isEmpty else { throw ValidationError("give at least one --region ID:UUID[:MAJOR[:MINOR]]") }
        if let duration { guard duration.isFinite, duration > 0 else { throw ValidationError("--duration must be a positive number of seconds, got \(duration)") } }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let specification = try controller.specification()
            let regions = try regionSpecifiers.map { try BeaconRegion(specifier: $0) }
            let captureFile = try capture.map { path in try ControllerOptions.bluetooth { () throws(BluetoothError) in try BTSnoopCaptureFile(path: path) } }
            defer { captureFile?.close() }
            let clock = ElapsedClock()
            let manager = LocationManager(profile: profile?.profile ?? .responsive,
                                          automation: Automation(requestStateOnStart: true, retry: Automation.Retry()),
                                          clock: clock, sources: [.beacon: .notDetermined])
            let forwarder = PrintingDelegate(printer: EventPrinter(json: json, allEvents: allEvents))
            manager.delegate = forwarder
            let scanner = BeaconScanner(specification: specification, manager: manager, capture: captureFile)
            try await ControllerOptions.bluetooth { () async throws(BluetoothError) in try await scanner.start() }
            for region in regions {
                manager.startMonitoring(for: region)
                if range { manager.startRangingBeacons(in: region) }
            }
            try await ControllerOptions.wait(duration: duration) { !scanner.lastErrorIsFinal }
            forwarder.close() // the scanner's own shutdown is not a monitoring failure worth printing
            let finalState = scanner.state
            await scanner.stop()
            withExtendedLifetime(forwarder) {}
            if case .failed(let error) = finalState { throw error.regionKitError }
        }
    }
}

/// Forwards every manager event to an ``EventPrinter`` until closed.
final class PrintingDelegate: LocationManagerDelegate, Sendable {
    private let printer: EventPrinter
    private let open = Atomic<Bool>(true)

    init(printer: EventPrinter) { self.printer = printer }

    func close() { open.store(false, ordering: .sequentiallyConsistent) }

    func locationManager(_ manager: LocationManager, didReceive event: LocationEvent) {
        guard open.load(ordering: .sequentiallyConsistent) else { return }
        printer.print(.location(event))
    }
}
