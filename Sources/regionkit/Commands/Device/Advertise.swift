import ArgumentParser
import Foundation
import RegionKit
import RegionKitBluetooth

struct Advertise: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Advertise a beacon (iBeacon, AltBeacon, Eddystone-UID or -URL) through an HCI controller, non-connectable, until stopped.",
        discussion: """
        --format ibeacon (default) sends what an iPhone sends for CLBeaconRegion.peripheralData(withMeasuredPower:): \
        Flags + Apple manufacturer data (uuid, major, minor, measured power). --format altbeacon sends the AltBeacon \
        manufacturer data with id1 = --uuid, id2 = --major, id3 = --minor (as the Android Beacon Library maps them), \
        reference RSSI = --measured-power, company --manufacturer (default 0x0118). --format eddystone-uid sends \
        --namespace (20 hex digits) and --instance (12) with ranging data at 0 m = --measured-power + 41 dB; \
        --format eddystone-url sends --url compressed with the Eddystone-URL codes. Legacy ADV_NONCONN_IND every \
        --interval-ms (ADV_SCAN_IND with an iBeacon's --name in the scan response). Exits non-zero if the \
        controller stops advertising.
        """
    )

    @OptionGroup var controller: ControllerOptions

    @Option(help: "ibeacon (default), altbeacon, eddystone-uid or eddystone-url.")
    var format: String = "ibeacon"

    @Option(help: "Proximity UUID (iBeacon) or id1 (AltBeacon).")
    var uuid: String?

    @Option(help: "Eddystone-UID namespace: 20 hex digits (10 bytes).")
    var namespace: String?

    @Option(help: "Eddystone-UID instance: 12 hex digits (6 bytes).")
    var instance: String?

    @Option(help: "Eddystone-URL: the URL (http:// or https://, at most 17 bytes once compressed).")
    var url: String?

    @Option(help: "AltBeacon company identifier (MFG ID), 0...65535 (default 0x0118 = 280).")
    var manufacturer: UInt16 = AltBeaconFrame.defaultManufacturerID

    @Option(help: "Major, 0...65535 (default 0).")
    var major: UInt16 = 0

    @Option(help: "Minor, 0...65535 (default 0).")
    var minor: UInt16 = 0

    @Option(name: .customLong("measured-power"), parsing: .unconditional, help: "Expected RSSI at 1 m in dBm (default -59): iBeacon -128...127, AltBeacon -127...0 (reference RSSI), Eddystone -141...-21 (sent +41 dB as the 0 m value, which the spec limits to -100...+20); negative values are fine: --measured-power -59.")
    var measuredPower: Int?

    @Option(name: .customLong("interval-ms"), help: "Advertising interval in milliseconds, 20...10240.")
    var intervalMilliseconds: Double = 100

    @Option(help: "A local name sent in the scan response.")
    var name: String?

    @OptionGroup var runFor: DurationOptions

    func validate() throws {
        _ = try beaconFrame()
        guard intervalMilliseconds.isFinite, (20...10_240).contains(intervalMilliseconds) else {
            throw ValidationError("--interval-ms \(intervalMilliseconds) is outside 20...10240")
        }
    }

    /// The frame the options describe; a ValidationError names the option at fault.
    func beaconFrame() throws -> BeaconFrame {
        let kind = format.lowercased()
        if let measuredPower {
            try Self.checkPower(measuredPower, format: kind)
        }
        func forbid(_ names: [(String, Bool)]) throws {
            for (name, given) in names where given { throw ValidationError("\(name) does not go with --format \(kind)") }
        }
        func proximityUUID() throws -> UUID {
            guard let uuid else { throw ValidationError("--format \(kind) needs --uuid") }
            guard let parsed = UUID(flexibleString: uuid) else { throw ValidationError("--uuid '\(uuid)' is not a UUID (like E2C56DB5-DFFB-48D2-B060-D0F5A71096E0)") }
            return parsed
        }
        let power = measuredPower ?? IBeaconFrame.defaultMeasuredPower
        switch kind {
        case "ibeacon":
            try forbid([("--namespace", namespace != nil), ("--instance", instance != nil), ("--url", url != nil)])
            return .iBeacon(IBeaconFrame(identity: BeaconIdentity(uuid: try proximityUUID(), major: major, minor: minor),
                                         measuredPower: measuredPower.map { Int8($0) }, localName: name))
        case "altbeacon":
            try forbid([("--namespace", namespace != nil), ("--instance", instance != nil), ("--url", url != nil), ("--name", name != nil)])
            return .altBeacon(AltBeaconFrame(identity: BeaconIdentity(uuid: try proximityUUID(), major: major, minor: minor, format: .altBeacon),
                                             referenceRSSI: Int8(power), manufacturerID: manufacturer))
        case "eddystone-uid", "eddystone":
            try forbid([("--uuid", uuid != nil), ("--url", url != nil), ("--name", name != nil)])
            guard let namespace, let instance else { throw ValidationError("--format eddystone-uid needs --namespace HEX20 and --instance HEX12") }
            guard let ns = Self.bytes(hex: namespace), ns.count == 10 else { throw ValidationError("--namespace '\(namespace)' is not 20 hex digits") }
            guard let inst = Self.bytes(hex: instance), inst.count == 6 else { throw ValidationError("--instance '\(instance)' is not 12 hex digits") }
            guard let identity = BeaconIdentity(eddystoneNamespace: ns, instance: inst) else { throw ValidationError("--namespace/--instance are not 10 and 6 bytes") }
            return .eddystone(.uid(EddystoneUIDFrame(identity: identity, rangingData: Int8(power + 41))))
        case "eddystone-url":
            try forbid([("--uuid", uuid != nil), ("--namespace", namespace != nil), ("--instance", instance != nil), ("--name", name != nil)])
            guard let url else { throw ValidationError("--format eddystone-url needs --url") }
            do {
                return .eddystone(.url(try EddystoneURLFrame(url: url, txPower: Int8(power + 41))))
            } catch {
                throw ValidationError("--url: \(error.message)")
            }
        default:
            throw ValidationError("--format '\(format)' is not ibeacon, altbeacon, eddystone-uid or eddystone-url")
        }
    }

    /// The measured powers the formats' documents allow, as `--measured-power` (expected RSSI at 1 m):
    /// iBeacon a signed byte; AltBeacon's reference RSSI "0 to -127" (AltBeacon spec, github.com/AltBeacon/spec,
    /// "REFERENCE RSSI"); Eddystone's ranging data / TX power at 0 m "-100 dBm to +20 dBm" (google/eddystone
    /// eddystone-uid/README.md "Tx Power", the same for eddystone-url), sent as --measured-power + 41 dB,
    /// so --measured-power −141…−21.
    static func checkPower(_ power: Int, format kind: String) throws {
        switch kind {
        case "altbeacon":
            guard (-127...0).contains(power) else {
                throw ValidationError("--measured-power \(power) is outside -127...0 dBm, the AltBeacon spec's reference RSSI range")
            }
        case "eddystone-uid", "eddystone", "eddystone-url":
            guard (-141 ... -21).contains(power) else {
                let (atZero, overflow) = power.addingReportingOverflow(41)   // the value is the user's: any Int
                throw ValidationError("--measured-power \(power) gives \(overflow ? "more than \(Int.max)" : "\(atZero)") dBm at 0 m (sent as --measured-power + 41): Eddystone allows -100...+20 dBm at 0 m, so --measured-power must be within -141...-21")
            }
        default:
            guard (-128...127).contains(power) else {
                throw ValidationError("--measured-power \(power) is outside -128...127 dBm (one signed byte)")
            }
        }
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = Int(String(UnicodeScalar(digits[index])), radix: 16), let low = Int(String(UnicodeScalar(digits[index + 1])), radix: 16) else { return nil }
            out.append(UInt8(high << 4 | low))
            index += 2
        }
        return out
    }

    func run() async throws {
        try await Console.reportingErrors {
            runFor.watchSignals()   // a Ctrl-C while the controller opens still ends in the cleanup
            let specification = try controller.specification()
            let frame: BeaconFrame
            do { frame = try beaconFrame() } catch let error as ValidationError {
                throw RegionKitError(.invalidArgument, error.message)
            }
            let transport = try await BluetoothError.bridged { () async throws(BluetoothError) -> any HCITransport in
                do { return try await specification.open(timeout: .seconds(3)) } catch {
                    throw BluetoothError(transport: error, "cannot open \(specification)")
                }
            }
            let advertiser = BeaconAdvertiser(transport: transport, transportName: specification.description,
                                              configuration: .init(beacon: frame, intervalMilliseconds: intervalMilliseconds))
            do throws(BluetoothError) {
                try await advertiser.start()
            } catch {
                await advertiser.stop()
                throw error.regionKitError
            }
            Console.line("Advertising \(Self.describe(frame)) every \(JSONLine.number(intervalMilliseconds)) ms on \(specification)\(name.map { " as '\($0)'" } ?? "")")
            try await runFor.wait { advertiser.isAdvertising }
            let failure = advertiser.isAdvertising ? nil : advertiser.lastError
            await advertiser.stop()
            if let failure {
                throw RegionKitError(.sourceUnavailable, "the controller stopped advertising: \(failure.message)")
            }
            Console.line("Stopped advertising.")
        }
    }

    /// `iBeacon UUID:1:2 measured power -59 dBm`, `Eddystone-URL https://… tx power -18 dBm at 0 m`, …
    static func describe(_ frame: BeaconFrame) -> String {
        switch frame {
        case .iBeacon(let f): "iBeacon \(f.identity) measured power \(f.measuredPower) dBm"
        case .altBeacon(let f): "AltBeacon \(f.identity) reference RSSI \(f.referenceRSSI) dBm"
        case .eddystone(.uid(let f)): "Eddystone-UID \(f.identity) ranging data \(f.rangingData) dBm at 0 m"
        case .eddystone(.url(let f)): "Eddystone-URL \(f.url) tx power \(f.txPower) dBm at 0 m"
        case .eddystone(.tlm): "Eddystone-TLM"
        }
    }
}
