import RegionKitHCI

/// Which HCI scanning commands a ``BeaconScanner`` uses.
///
/// Legacy scanning (`LE Set Scan Parameters` / `LE Set Scan Enable`, reports in subevent 0x02)
/// works on every LE controller; extended scanning (`LE Set Extended Scan Parameters` / `Enable`,
/// subevent 0x0D) is what Bluetooth 5 controllers that advertise the LE Extended Advertising feature
/// expect, and some of them then send extended reports even to legacy commands. The scanner decodes
/// both report kinds whatever it chose.
///
/// ```swift
/// var configuration = BeaconScanner.Configuration()
/// configuration.mode = .automatic          // extended if the controller supports it
/// configuration.mode = .legacy             // force the Bluetooth 4.x commands
/// ```
public enum ScanningMode: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Extended when `LE Read Local Supported Features` has LE Extended Advertising (bit 12), else legacy.
    case automatic
    /// Always the legacy commands.
    case legacy
    /// Always the extended commands; fails with `.unsupported` on a controller without the feature.
    case extended

    /// The commands actually used for a controller with `features`.
    public func resolved(for features: LEFeatures) throws(BluetoothError) -> ScanningMode {
        switch self {
        case .legacy: return .legacy
        case .automatic: return features.contains(.extendedAdvertising) ? .extended : .legacy
        case .extended:
            guard features.contains(.extendedAdvertising) else {
                throw BluetoothError(.unsupported, "extended scanning requested but the controller lacks LE Extended Advertising (LE features 0x\(String(features.rawValue, radix: 16)))")
            }
            return .extended
        }
    }

    public var description: String { rawValue }
}
