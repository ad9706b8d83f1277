import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth
import RegionKitConcurrency
import RegionKitService

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for BLE advertisements through an HCI controller and print them (iBeacons decoded).",
        discussion: """
        SPEC is hciN (Linux HCI socket, user channel; hciN:raw for the raw channel), tcp:HOST:PORT (H4 over TCP, \
        e.g. a Bumble virtual controller) or serial:PATH[:BAUD] (H4 over a UART). \
        With --json, one object per advertising frame: {"t", "address", "addressType", "eventType", "rssi", \
        "txPower", "data", "ibeacon"?: {"uuid", "major", "minor", "measuredPower"}, "altbeacon"?: {"id1", "id2", "id3", \
        "referenceRSSI", "manufacturer", "reserved"}, "eddystone"?: {"frame": "uid"|"url"|"tlm", …}, "layout"?: {…}, \
        "telemetry"?: the transmitter's latest TLM}; a scan response that only \
        repeats the advertisement is not printed (it is not a second frame). A summary goes to stderr at the end. \
        With --publish mqtt://HOST[:PORT] (or mqtts://) the iBeacon sightings also go to that broker, batched every \
        100 ms on regionkit/scanners/SCANNER, for a central `regionkit run` with `- mqtt: {format: regionkit}` \
        (SCANNER: the name, ASCII letters, digits, _ and - kept, any other byte as %XX). The scanner also keeps a retained \
        status on regionkit/scanners/SCANNER/status: online while connected, offline after it stops and as its \
        will, so the hub holds the beacons only it hears while it restarts (--no-status: none, for a broker whose \
        access rules allow only the batches' topic). \
        Credentials come from REGIONKIT_MQTT_USERNAME and REGIONKIT_MQTT_PASSWORD, never from the command line.
        """
    )

    @OptionGroup var controller: ControllerOptions

    @OptionGroup var output: OutputOptions

    @OptionGroup var runFor: DurationOptions

    @Option(help: "Record every HCI packet to this btsnoop file (tshark -r / btmon -r read it).")
    var capture: String?

    @Flag(help: "Active scanning (send SCAN_REQ, receive scan responses); passive by default.")
    var active = false

    @Option(help: "Scanning commands: automatic (by the controller's LE features), legacy or extended.")
    var mode: ScanningMode = .automatic

    @OptionGroup var layoutOptions: LayoutOptions

    @Option(help: "Also publish the beacon sightings to this MQTT broker (mqtt://HOST[:PORT] or mqtts://).")
    var publish: String?

    @Option(help: "This scanner's name in published sightings (a room, for the hub's rooms and scanner-bound regions).")
    var scanner: String?

    @Option(help: "A PEM CA certificate for an mqtts:// broker.")
    var caFile: String?

    @Flag(help: "With --publish: keep no online/offline status (and no will) on regionkit/scanners/SCANNER/status.")
    var noStatus = false

    func validate() throws {
        if publish == nil && (scanner != nil || caFile != nil || noStatus) { throw ValidationError("--scanner, --ca-file and --no-status go with --publish") }
        if publish != nil && scanner == nil { throw ValidationError("--publish needs --scanner NAME (the room this scanner is in)") }
    }

    func run() async throws {
        try await Console.reportingErrors {
            runFor.watchSignals()   // a Ctrl-C while the controller opens still ends in the cleanup
            let specification = try controller.specification()
            let captureFile = try capture.map { path in try BluetoothError.bridged { () throws(BluetoothError) in try BTSnoopCaptureFile(path: path) } }
            defer { captureFile?.close() }
            let clock = ElapsedClock()
            var configuration = BeaconScanner.Configuration()
            configuration.scanType = active ? .active : .passive
            configuration.mode = mode
            configuration.beaconLayouts = try layoutOptions.beaconLayouts()
            let scanner = BeaconScanner(specification: specification, manager: nil, clock: clock, configuration: configuration, capture: captureFile)
            let events = scanner.events()
            let publisher = try publish.map { url in
                try ScannerPublisher(url: url, scanner: self.scanner ?? "", caFile: caFile, status: !noStatus, logger: Console.logger(label: "regionkit.scan"))
            }
            let publishing = publisher.map { publisher in Task { await publisher.run() } }
            try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
            if !output.json { Console.line("Scanning on \(specification) (\(scanner.state)); Ctrl-C to stop") }
            let json = output.json
            let printer = Task {
                for await event in events {
                    switch event {
                    case .sighting(let sighting):
                        if json { Console.line(sighting.jsonLine(origin: .zero)) } else { Console.textLine(Self.describe(sighting)) }
                        if let publisher, let identity = sighting.identity, let rssi = sighting.advertisement.rssi {
                            let power = sighting.measuredPower ?? 0
                            publisher.add(identity, rssi: Int(rssi), measuredPower: power == 0 ? nil : power, at: Date().timeIntervalSince1970)
                        }
                    case .stateChanged(let state):
                        Console.status("regionkit: scanner \(state)\n")
                    }
                }
            }
            let scanStart = ContinuousClock.now
            try await runFor.wait { !(scanner.lastErrorIsFinal) }
            let scanned = (ContinuousClock.now - scanStart).inSeconds
            await scanner.stop()
            await printer.value
            if let publisher, let publishing {
                await publisher.shutdown()
                publishing.cancel()
                await publishing.value
                let counts = publisher.counts
                Console.status("regionkit: published \(counts.published) sighting(s) in \(counts.batches) batch(es) to \(publisher.topic); \(counts.dropped) dropped while the broker was unreachable\n")
            }
            let statistics = scanner.statistics
            // Over the whole scan, not between the first and the last frame: a beacon or controller
            // that went quiet two seconds into a ten-second scan showed its full rate.
            let rate = scanned > 0 ? String(format: "%.1f", Double(statistics.frames) / scanned) : "n/a"
            Console.status("""
                regionkit: \(statistics.frames) frame(s) from \(statistics.reports) report(s) \
                (\(statistics.scanResponseRepeats) scan-response repeat(s) dropped), \(statistics.iBeaconFrames) iBeacon frame(s), \(statistics.otherBeaconFrames) other beacon frame(s), \(statistics.telemetryFrames) TLM frame(s), \(rate) frames/s\
                \(captureFile.map { ", \($0.recordCount) packet(s) captured to \($0.path)" } ?? "")\n
                """)
            if case .failed(let error) = scanner.state { throw error.regionKitError }
            // The capture is made at the first packet: a file that could not be written then is an error.
            if let error = captureFile?.writeError { throw error.regionKitError }
        }
    }

    static func describe(_ sighting: AdvertisementSighting) -> String {
        let advertisement = sighting.advertisement
        var text = String(format: "%8.3f  ", sighting.timestamp.seconds)
        text += "\(advertisement.address) (\(advertisement.addressType))  \(advertisement.kind)  rssi \(advertisement.rssi.map { "\($0) dBm" } ?? "n/a")"
        if let frame = sighting.frame {
            text += "  " + Advertise.describe(frame)
            if case .eddystone(.tlm(let tlm)) = frame {
                text += " battery \(tlm.batteryMillivolts.map { "\($0) mV" } ?? "n/a") temperature \(tlm.temperature.map { String(format: "%.2f °C", $0) } ?? "n/a") count \(tlm.advertisingCount.map(String.init) ?? "n/a") uptime \(tlm.uptime.map { "\($0) s" } ?? "n/a")"
            }
        } else if let match = sighting.layoutMatch {
            text += "  layout \(match.layout.expression): ids \(match.decoded.identifiers.map { BeaconIdentity.hex($0) }.joined(separator: " "))"
        } else {
            text += "  \(advertisement.data.count) data byte(s)"
        }
        return text
    }
}
