import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Scan for BLE advertisements through an HCI controller and print them (iBeacons decoded).",
        discussion: """
        SPEC is hciN (Linux HCI socket, user channel; hciN:raw for the raw channel), tcp:HOST:PORT (H4 over TCP, \
        e.g. a Bumble virtual controller) or serial:PATH[:BAUD] (H4 over a UART). \
        With --json, one object per advertising frame: {"t", "address", "addressType", "eventType", "rssi", \
        "txPower", "data", "ibeacon"?: {"uuid", "major", "minor", "measuredPower"}}; a scan response that only \
        repeats the advertisement is not printed (it is not a second frame). A summary goes to stderr at the end.
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

    func run() async throws {
        try await Console.reportingErrors {
            let specification = try controller.specification()
            let captureFile = try capture.map { path in try BluetoothError.bridged { () throws(BluetoothError) in try BTSnoopCaptureFile(path: path) } }
            defer { captureFile?.close() }
            let clock = ElapsedClock()
            var configuration = BeaconScanner.Configuration()
            configuration.scanType = active ? .active : .passive
            configuration.mode = mode
            let scanner = BeaconScanner(specification: specification, manager: nil, clock: clock, configuration: configuration, capture: captureFile)
            let events = scanner.events()
            try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
            if !output.json { Console.line("Scanning on \(specification) (\(scanner.state)); Ctrl-C to stop") }
            let json = output.json
            let printer = Task {
                for await event in events {
                    switch event {
                    case .sighting(let sighting):
                        Console.line(json ? sighting.jsonLine(origin: .zero) : Self.describe(sighting))
                    case .stateChanged(let state):
                        FileHandle.standardError.write(Data("regionkit: scanner \(state)\n".utf8))
                    }
                }
            }
            try await runFor.wait { !(scanner.lastErrorIsFinal) }
            await scanner.stop()
            await printer.value
            let statistics = scanner.statistics
            let rate = statistics.framesPerSecond.map { String(format: "%.1f", $0) } ?? "n/a"
            FileHandle.standardError.write(Data("""
                regionkit: \(statistics.frames) frame(s) from \(statistics.reports) report(s) \
                (\(statistics.scanResponseRepeats) scan-response repeat(s) dropped), \(statistics.iBeaconFrames) iBeacon frame(s), \(rate) frames/s\
                \(captureFile.map { ", \($0.recordCount) packet(s) captured to \($0.path)" } ?? "")\n
                """.utf8))
            if case .failed(let error) = scanner.state { throw error.regionKitError }
        }
    }

    static func describe(_ sighting: AdvertisementSighting) -> String {
        let advertisement = sighting.advertisement
        var text = String(format: "%8.3f  ", sighting.timestamp.seconds)
        text += "\(advertisement.address) (\(advertisement.addressType))  \(advertisement.kind)  rssi \(advertisement.rssi.map { "\($0) dBm" } ?? "n/a")"
        if let iBeacon = sighting.iBeacon {
            text += "  iBeacon \(iBeacon.identity) power \(iBeacon.measuredPower) dBm"
        } else {
            text += "  \(advertisement.data.count) data byte(s)"
        }
        return text
    }
}
