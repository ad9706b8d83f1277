import ArgumentParser
import Foundation
import RegionKit
import RegionKitConcurrency
import RegionKitBluetooth
import RegionKitHCI
import RegionKitHCITesting

extension Bench {
    /// `regionkit bench latency`: time from an HCI advertising report reaching the host stack to
    /// the delegate call it causes, through the real scanner, engine and manager.
    struct Latency: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Latency from an HCI LE Advertising Report entering the scanner to the delegate's didEnterRegion (p50/p99).",
            discussion: """
            A BeaconScanner runs over an in-memory controller (InMemoryHCIController: no socket, no radio) \
            and feeds a LocationManager (responsive profile, SystemClock). N beacon regions are registered and \
            left to be determined outside (3 s). Then, one at a time, the report of beacon i is handed to the \
            transport and the time until the delegate's didEnterRegion for region i is taken: the host stack's \
            whole path — transport stream, command channel, report decoding, engine, delegate delivery — with \
            no queueing (each report waits for the previous delegate call).
            """
        )

        @Option(help: "Reports to time (each enters its own region).")
        var reports: Int = 2_000

        func run() async throws {
            guard reports > 0, reports <= 100_000 else { throw ValidationError("--reports must be within 1...100000") }
            let probe = LatencyProbe()
            let manager = LocationManager(profile: .responsive)
            manager.delegate = probe
            let controller = InMemoryHCIController(supportsExtendedAdvertising: false)
            let scanner = BeaconScanner(manager: manager, transportName: "memory") { controller }
            try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
            let regions = try (0..<reports).map { index -> Region in
                let identity = IngestRun.identity(index)
                return .beacon(try BeaconRegion(identifier: "b\(index)", uuid: identity.uuid, major: identity.major, minor: identity.minor))
            }
            for region in regions { manager.startMonitoring(for: region) }
            let events = (0..<reports).map { IngestRun.event(beacon: $0, rssi: -60) }
            // Wait for the initial determination (outside), so each report gives a didEnterRegion.
            let deadline = ContinuousClock.now + .seconds(20)
            while regions.contains(where: { manager.state(for: $0) != .outside }) {
                guard ContinuousClock.now < deadline else {
                    Console.error("regions were not determined outside within 20 s")
                    throw ExitCode(1)
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            var latencies: [Double] = []
            latencies.reserveCapacity(reports)
            var arrivals = probe.arrivals.makeAsyncIterator()
            for index in 0..<reports {
                let start = ContinuousClock.now
                controller.inject(event: events[index])
                guard let arrival = await arrivals.next() else { break }
                guard arrival.region == "b\(index)" else {
                    Console.error("expected didEnterRegion for b\(index), got \(arrival.region)")
                    throw ExitCode(1)
                }
                latencies.append(start.duration(to: arrival.time).inSeconds * 1e6)
            }
            await scanner.stop()
            latencies.sort()
            func percentile(_ p: Double) -> Double { latencies[min(latencies.count - 1, Int((p * Double(latencies.count)).rounded(.up)) - 1)] }
            Console.line("HCI report → didEnterRegion, \(latencies.count) reports, in-memory controller, one at a time")
            Console.line(String(format: "  p50 %.1f µs   p90 %.1f µs   p99 %.1f µs   max %.1f µs", percentile(0.5), percentile(0.9), percentile(0.99), latencies.last ?? 0))
        }
    }
}

/// A delegate that timestamps each didEnterRegion the moment it is called.
final class LatencyProbe: LocationManagerDelegate, Sendable {
    struct Arrival: Sendable {
        var region: String
        var time: ContinuousClock.Instant
    }

    let arrivals: AsyncStream<Arrival>
    private let continuation: AsyncStream<Arrival>.Continuation

    init() {
        (arrivals, continuation) = AsyncStream.makeStream(of: Arrival.self)
    }

    func locationManager(_ manager: LocationManager, didEnterRegion region: Region) {
        continuation.yield(Arrival(region: region.identifier, time: .now))
    }
}
