/// The LE feature bit mask returned by `HCI_LE_Read_Local_Supported_Features`
/// (Core spec Vol 6 Part B 4.6): 8 bytes little-endian after the status byte.
///
/// ```swift
/// if case .commandComplete(_, .leReadLocalSupportedFeatures, let returned) = event {
///     let features = try LEFeatures(returnParameters: returned)
///     features.contains(.extendedAdvertising) // scan with the extended commands
/// }
/// ```
public struct LEFeatures: OptionSet, Hashable, Sendable {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let encryption = LEFeatures(rawValue: 1 << 0)
    public static let extendedScanFilterPolicies = LEFeatures(rawValue: 1 << 7)
    public static let le2MPHY = LEFeatures(rawValue: 1 << 8)
    public static let leCodedPHY = LEFeatures(rawValue: 1 << 11)
    public static let extendedAdvertising = LEFeatures(rawValue: 1 << 12)
    public static let periodicAdvertising = LEFeatures(rawValue: 1 << 13)

    /// Decodes Command Complete return parameters: status (must be success), then 8 feature bytes.
    public init(returnParameters: [UInt8]) throws(HCIError) {
        var reader = ByteReader(returnParameters)
        let status = HCIStatus(rawValue: try reader.uint8("Status"))
        guard status.isSuccess else {
            throw HCIError(code: .invalidValue, message: "LE Read Local Supported Features failed: \(status)", offset: 0)
        }
        let bytes = try reader.bytes(8, "LE_Features")
        var value: UInt64 = 0
        for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << UInt64(8 * index) }
        rawValue = value
    }
}
