import FuzzSupport
import Foundation
import RegionKitCore
import RegionKitHCI

/// Command-line specifiers: `--beacon id:uuid[:major[:minor]]`, `--circle id:lat,lon,radius`, and
/// `--hci` transport specifications.
enum RegionSpecifierFuzz {
    static func run(_ data: [UInt8]) {
        let text = String(decoding: data, as: UTF8.self)
        _ = try? BeaconRegion(specifier: text)
        _ = try? CircularRegion(specifier: text)
        _ = try? HCITransportSpecification(parsing: text)
        _ = UUID(flexibleString: text)
        _ = BluetoothAddress(text)
    }
}
