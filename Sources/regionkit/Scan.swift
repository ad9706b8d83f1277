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

    @Flag(help: "Print one JSON object per line instead of a readable line.")
    var json = false

    @Option(help: "Stop after this many seconds (default: run until interrupted).")
    var duration: Double?

    @Option(help: "Record every HCI packet to this btsnoop file (tshark -r / btmon -r read it).")
    var capture: String?

    @Flag(help: "Active scanning (send SCAN_REQ, receive scan responses); passive by default.")
    var active = false

    @Option(help: "Scanning commands: automatic (by the controller's LE features), legacy or extended.")
    var mode: ScanningMode = .automatic

    func validate() throws {
        if let duration { guard duration.isFinite, duration > 0 else { throw ValidationError("--duration must be a positive number of seconds, got \(duration)") } }
    }

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
            if !json { Console.line("Scanning on \(specification) (\(scanner.state)); Ctrl-C to stop") }
            let json = self.json
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
            try await ControllerOptions.wait(duration: duration) { !(scanner.lastErrorIsFinal) }
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

extension ScanningMode: ExpressibleByArgument {}

extension BeaconScanner {
    /// True when the scanner gave up (its first start failed or reconnects ran out).
    var lastErrorIsFinal: Bool {
        if case .failed = state { return true }
        return false
    }
}

/// `--hci SPEC`, shared by scan, advertise and monitor, and the helpers they share.
struct ControllerOptions: ParsableArguments {
    @Option(name: .customLong("hci"), help: "The controller: hciN[:user|:raw], tcp:HOST:PORT or serial:PATH[:BAUD].")
    var hci: String

    func specification() throws -> HCITransportSpecification {
        do {
            return try HCITransportSpecification(parsing: hci)
        } catch {
            throw RegionKitError(.invalidArgument, "--hci \(error.message)")
        }
    }

    /// Sleeps for `duration` seconds (forever when nil) while `healthy()` holds, checking 10 times a second.
    static func wait(duration: Double?, while healthy: () -> Bool) async throws {
        let end = duration.map { ContinuousClock.now + .milliseconds(Int64($0 * 1000)) }
        while healthy() {
            if let end, ContinuousClock.now >= end { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

/// Real time counted from when the command started, so `t` in the output is seconds since start
/// (the same convention as `simulate`, whose printer reports times from zero).
final class ElapsedClock: MonitoringClock {
    private let system = SystemClock()
    private let origin: Timestamp

    init() { origin = system.now }

    var now: Timestamp { Timestamp(seconds: system.now - origin) }

    func schedule(at deadline: Timestamp, _ work: @escaping @Sendable () -> Void) -> ScheduledTimer {
        system.schedule(at: deadline + origin.seconds, work)
    }
}
