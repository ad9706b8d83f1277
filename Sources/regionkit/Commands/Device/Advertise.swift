import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth

struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertise an iBeacon through an HCI controller (spec §4), non-connectable, until stopped.",
        discussion: """
        The frame is what an iPhone sends for CLBeaconRegion.peripheralData(withMeasuredPower:): Flags + Apple \
        manufacturer data (uuid, major, minor, measured power), as legacy ADV_NONCONN_IND every --interval-ms \
        (ADV_SCAN_IND with the --name in the scan response). Exits non-zero if the controller stops advertising.
        """
    )

    @OptionGroup var controller: ControllerOptions

    @Option(help: "Proximity UUID.")
    var uuid: String

    @Option(help: "Major, 0...65535 (default 0).")
    var major: UInt16 = 0

    @Option(help: "Minor, 0...65535 (default 0).")
    var minor: UInt16 = 0

    @Option(name: .customLong("measured-power"), parsing: .unconditional, help: "Expected RSSI at 1 m in dBm, -128...127 (default -59); negative values are fine: --measured-power -59.")
    var measuredPower: Int?

    @Option(name: .customLong("interval-ms"), help: "Advertising interval in milliseconds, 20...10240.")
    var intervalMilliseconds: Double = 100

    @Option(help: "A local name sent in the scan response.")
    var name: String?

    @OptionGroup var runFor: DurationOptions

    func validate() throws {
        guard UUID(uuidString: uuid) != nil else { throw ValidationError("--uuid '\(uuid)' is not a UUID (like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)") }
        if let measuredPower, !(-128...127).contains(measuredPower) {
            throw ValidationError("--measured-power \(measuredPower) is outside -128...127 dBm")
        }
        guard intervalMilliseconds.isFinite, (20...10_240).contains(intervalMilliseconds) else {
            throw ValidationError("--interval-ms \(intervalMilliseconds) is outside 20...10240")
        }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let specification = try controller.specification()
            guard let proximityUUID = UUID(uuidString: uuid) else { throw RegionKitError(.invalidArgument, "--uuid '\(uuid)' is not a UUID") }
            let frame = IBeaconFrame(identity: BeaconIdentity(uuid: proximityUUID, major: major, minor: minor),
                                     measuredPower: measuredPower.map { Int8($0) }, localName: name)
            let transport = try await BluetoothError.bridged { () async throws(BluetoothError) -> any HCITransport in
                do { return try await specification.open(timeout: .seconds(3)) } catch {
                    throw BluetoothError(transport: error, "cannot open \(specification)")
                }
            }
            let advertiser = BeaconAdvertiser(transport: transport, transportName: specification.description,
                                              configuration: .init(frame: frame, intervalMilliseconds: intervalMilliseconds))
            do throws(BluetoothError) {
                try await advertiser.start()
            } catch {
                await advertiser.stop()
                throw error.regionKitError
            }
            Console.line("Advertising iBeacon \(frame.identity) measured power \(frame.measuredPower) dBm every \(JSONLine.number(intervalMilliseconds)) ms on \(specification)\(name.map { " as '\($0)'" } ?? "")")
            try await runFor.wait { advertiser.isAdvertising }
            let failure = advertiser.isAdvertising ? nil : advertiser.lastError
            await advertiser.stop()
            if let failure {
                throw RegionKitError(.sourceUnavailable, "the controller stopped advertising: \(failure.message)")
            }
            Console.line("Stopped advertising.")
        }
    }
}
