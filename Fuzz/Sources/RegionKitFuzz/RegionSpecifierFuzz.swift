import FuzzSupport
import Foundation
import RegionKitCore
import RegionKitHCI

/// Command-line specifiers: `--beacon id:uuid[:major[:minor]]`, `--circle id:lat,lon,radius`, and
/// `--hci` transport specifications; and a beacon identity's text as logged events carry it
/// (`BeaconIdentity(description:)`, read back by the presence hub): what it reads writes back to
/// text that reads to the same identity.
enum RegionSpecifierFuzz {
    static func run(_ data: [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? BeaconRegion(specifier: text)
        _ = try? CircularRegion(specifier: text)
        _ = try? HCITransportSpecification(parsing: text)
        _ = UUID(flexibleString: text)
        _ = BluetoothAddress(text)
        if let identity = BeaconIdentity(description: text), BeaconIdentity(description: identity.description) != identity {
            FuzzTarget.fail("BeaconIdentity(description:) of '\(identity.description)' (read from '\(text)') is not \(identity)")
        }
    }
}
