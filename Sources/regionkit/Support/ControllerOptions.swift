import ArgumentParser
import RegionKit
import RegionKitBluetooth

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
