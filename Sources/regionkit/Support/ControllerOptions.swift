import ArgumentParser
import RegionKit
import RegionKitBluetooth

/// `--hci SPEC`, shared by scan and advertise.
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
}
