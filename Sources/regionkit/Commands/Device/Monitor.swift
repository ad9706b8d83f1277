import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitLocation
import RegionKitService
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

    @Option(name: .customLong("hci"), help: "The Bluetooth controller for beacon regions: hciN[:user|:raw], tcp:HOST:PORT or serial:PATH[:BAUD].")
    var hci: String?

    @Option(help: "gpsd for circular regions, HOST:PORT (gpsd's default is 127.0.0.1:2947).")
    var gpsd: String?

    @OptionGroup var regionOptions: RegionOptions

    @Flag(help: "Also range the beacons of every region (didRangeBeacons every second).")
    var range = false

    @OptionGroup var output: EventOutputOptions

    @Option(help: "Monitoring profile: corelocation, altbeacon or responsive (also the experimental periodic and evidence, the reference cautiousprior).")
    var profile: ProfileOption?

    @Option(help: "A distance model file from `regionkit calibrate` (its model and RSSI filter replace the profile's).")
    var distanceModel: String?

    @OptionGroup var runFor: DurationOptions

    @Option(help: "Record every HCI packet to this btsnoop file (replay it with `regionkit replay FILE`).")
    var capture: String?

    @OptionGroup var layoutOptions: LayoutOptions

    func validate() throws {
        guard hci != nil || gpsd != nil else { throw ValidationError("give --hci SPEC (beacon regions) and/or --gpsd HOST:PORT (circular regions)") }
        guard !regionOptions.isEmpty else {
            throw ValidationError("give at least one --region ID:UUID[:MAJOR[:MINOR]], --geofence ID:LAT,LON,RADIUS or --regions FILE")
        }
        if !regionOptions.beaconSpecifiers.isEmpty && hci == nil { throw ValidationError("--region needs --hci (a Bluetooth controller)") }
        if !regionOptions.geofenceSpecifiers.isEmpty && gpsd == nil { throw ValidationError("--geofence needs --gpsd (a location source)") }
        if !layoutOptions.layouts.isEmpty && hci == nil { throw ValidationError("--layout needs --hci (a Bluetooth controller)") }
    }

    func run() async throws {
        try await Console.reportingErrors {
            runFor.watchSignals()   // a Ctrl-C while the controller opens still ends in the cleanup
            let specification = try hci.map { hci in
                do { return try HCITransportSpecification(parsing: hci) } catch { throw RegionKitError(.invalidArgument, "--hci \((error as? HCIError)?.message ?? "\(error)")") }
            }
            let endpoint = try gpsd.map(Self.parseEndpoint)
            let regionList = try regionOptions.regions()
            var monitoringProfile = profile?.profile ?? .responsive
            if let distanceModel { monitoringProfile.use(try DistanceModelFile.load(path: distanceModel)) }
            let captureFile = try capture.map { path in try BluetoothError.bridged { () throws(BluetoothError) in try BTSnoopCaptureFile(path: path) } }
            defer { captureFile?.close() }
            let clock = ElapsedClock()
            var sources: [RegionKind: AuthorizationStatus] = [:]
            if specification != nil { sources[.beacon] = .notDetermined }
            if endpoint != nil { sources[.circular] = .notDetermined }
            let manager = LocationManager(profile: monitoringProfile,
                                          automation: Automation(requestStateOnStart: true, retry: Automation.Retry()),
                                          clock: clock, sources: sources)
            let forwarder = PrintingDelegate(printer: output.printer())
            manager.delegate = forwarder
            var scanning = BeaconScanner.Configuration()
            scanning.beaconLayouts = try layoutOptions.beaconLayouts()
            let scanner = specification.map { BeaconScanner(specification: $0, manager: manager, configuration: scanning, capture: captureFile) }
            if let scanner {
                try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
            }
            let location = endpoint.map { endpoint in
                Task { await GPSDFeed.run(host: endpoint.host, port: endpoint.port, into: manager, logger: Console.logger(label: "regionkit.gpsd")) }
            }
            // Circles registered before gpsd answered wait for it in the engine (no failure
            // "notDetermined"), and start when it does.
            for region in regionList {
                manager.startMonitoring(for: region)
                if range, case .beacon(let beacon) = region { manager.startRangingBeacons(in: beacon) }
            }
            try await runFor.wait { !(scanner?.lastErrorIsFinal ?? false) }
            forwarder.close() // the sources' own shutdown is not a monitoring failure worth printing
            location?.cancel()
            let finalState = scanner?.state
            await scanner?.stop()
            withExtendedLifetime(forwarder) {}
            if case .failed(let error)? = finalState { throw error.regionKitError }
            if let error = captureFile?.writeError { throw error.regionKitError }
        }
    }

    /// `HOST:PORT`, `HOST` (port 2947) or `[IPv6]:PORT`.
    static func parseEndpoint(_ text: String) throws -> (host: String, port: UInt16) {
        var host = Substring(text), port: UInt16 = 2947
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if rest.hasPrefix(":") {
                guard let value = UInt16(rest.dropFirst()), value > 0 else { throw RegionKitError(.invalidArgument, "--gpsd '\(text)': bad port") }
                port = value
            }
        } else if let colon = host.lastIndex(of: ":") {
            guard let value = UInt16(host[host.index(after: colon)...]), value > 0 else {
                throw RegionKitError(.invalidArgument, "--gpsd '\(text)': port '\(host[host.index(after: colon)...])' is not 1...65535")
            }
            port = value
            host = host[..<colon]
        }
        guard !host.isEmpty else { throw RegionKitError(.invalidArgument, "--gpsd '\(text)': empty host") }
        return (String(host), port)
    }
}
