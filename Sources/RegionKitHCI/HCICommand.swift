/// An HCI command packet: opcode and parameters (Core spec Vol 4 Part E 5.4.1).
///
/// ``encoded`` is the packet as it goes on the wire after the H4 type byte:
/// opcode (2 bytes, little-endian), parameter total length (1 byte), parameters.
/// The static builders produce the commands a scanner/advertiser needs, with
/// typed, range-checked parameters.
///
/// ```swift
/// let reset = HCICommand.reset
/// reset.encoded                    // [0x03, 0x0C, 0x00]
/// let scan = try HCICommand.leSetScanEnable(true, filterDuplicates: false)
/// scan.encoded                     // [0x0C, 0x20, 0x02, 0x01, 0x00]
/// let packet = H4Packet(command: scan) // ready for an HCITransport
/// ```
public struct HCICommand: Hashable, Sendable, CustomStringConvertible {
    public let opcode: HCIOpcode
    public let parameters: [UInt8]

    /// Creates a command; throws if the parameters exceed the 255 bytes a command can carry.
    public init(opcode: HCIOpcode, parameters: [UInt8] = []) throws(HCIError) {
        guard parameters.count <= 255 else {
            throw HCIError(code: .invalidParameter, message: "command parameters are \(parameters.count) bytes; at most 255 fit the length byte")
        }
        self.opcode = opcode
        self.parameters = parameters
    }

    init(unchecked opcode: HCIOpcode, _ parameters: [UInt8] = []) {
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Decodes a command packet (without the H4 type byte). Rejects a short
    /// header and a length byte that disagrees with the bytes present.
    public init(decoding bytes: [UInt8]) throws(HCIError) {
        var reader = ByteReader(bytes)
        let opcode = HCIOpcode(rawValue: try reader.uint16LE("command opcode"))
        let length = Int(try reader.uint8("command parameter length"))
        guard reader.remaining == length else {
            throw HCIError(code: .lengthMismatch, message: "command parameter length says \(length) byte(s) but \(reader.remaining) follow", offset: 2)
        }
        self.init(unchecked: opcode, reader.rest())
    }

    /// Opcode little-endian, parameter length, parameters.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(3 + parameters.count)
        bytes.appendLE(opcode.rawValue)
        bytes.append(UInt8(truncatingIfNeeded: parameters.count))
        bytes.append(contentsOf: parameters)
        return bytes
    }

    public var description: String { "\(opcode) \(parameters.count) parameter byte(s)" }

    // MARK: Builders

    /// HCI_Reset (7.3.2).
    public static let reset = HCICommand(unchecked: .reset)
    /// HCI_Read_Local_Version_Information (7.4.1).
    public static let readLocalVersionInformation = HCICommand(unchecked: .readLocalVersionInformation)
    /// HCI_Read_BD_ADDR (7.4.6).
    public static let readBDADDR = HCICommand(unchecked: .readBDADDR)
    /// HCI_LE_Read_Local_Supported_Features (7.8.3).
    public static let leReadLocalSupportedFeatures = HCICommand(unchecked: .leReadLocalSupportedFeatures)

    /// HCI_Set_Event_Mask (7.3.1): 8 bytes little-endian. Bit 61 (`1 << 61`) enables LE Meta events.
    public static func setEventMask(_ mask: UInt64) -> HCICommand {
        var parameters: [UInt8] = []
        parameters.appendLE(mask)
        return HCICommand(unchecked: .setEventMask, parameters)
    }

    /// HCI_LE_Set_Event_Mask (7.8.1): bit 1 LE Advertising Report, bit 12 LE Extended Advertising Report.
    public static func leSetEventMask(_ mask: UInt64) -> HCICommand {
        var parameters: [UInt8] = []
        parameters.appendLE(mask)
        return HCICommand(unchecked: .leSetEventMask, parameters)
    }

    /// HCI_LE_Set_Scan_Parameters (7.8.10): type, interval, window, own address type, filter policy.
    public static func leSetScanParameters(_ scan: LEScanParameters) throws(HCIError) -> HCICommand {
        try scan.validate(maximumInterval: 0x4000)
        var parameters: [UInt8] = [scan.scanType.rawValue]
        parameters.appendLE(scan.interval)
        parameters.appendLE(scan.window)
        parameters.append(scan.ownAddressType.rawValue)
        parameters.append(scan.filterPolicy.rawValue)
        return HCICommand(unchecked: .leSetScanParameters, parameters)
    }

    /// HCI_LE_Set_Scan_Enable (7.8.11).
    public static func leSetScanEnable(_ enable: Bool, filterDuplicates: Bool = false) -> HCICommand {
        HCICommand(unchecked: .leSetScanEnable, [enable ? 0x01 : 0x00, filterDuplicates ? 0x01 : 0x00])
    }

    /// HCI_LE_Set_Extended_Scan_Parameters (7.8.64) scanning on the LE 1M PHY only:
    /// own address type, filter policy, Scanning_PHYs = 0x01, then type/interval/window for 1M.
    public static func leSetExtendedScanParameters(_ scan: LEScanParameters) throws(HCIError) -> HCICommand {
        try scan.validate(maximumInterval: 0xFFFF)
        var parameters: [UInt8] = [scan.ownAddressType.rawValue, scan.filterPolicy.rawValue, 0x01]
        parameters.append(scan.scanType.rawValue)
        parameters.appendLE(scan.interval)
        parameters.appendLE(scan.window)
        return HCICommand(unchecked: .leSetExtendedScanParameters, parameters)
    }

    /// HCI_LE_Set_Extended_Scan_Enable (7.8.65). `duration` in 10 ms units (0 = until disabled),
    /// `period` in 1.28 s units (0 = not periodic). `filterDuplicates`: 0 off, 1 on, 2 reset each period.
    public static func leSetExtendedScanEnable(
        _ enable: Bool, filterDuplicates: UInt8 = 0, duration: UInt16 = 0, period: UInt16 = 0
    ) throws(HCIError) -> HCICommand {
        guard filterDuplicates <= 2 else {
            throw HCIError(code: .invalidParameter, message: "filter duplicates \(hex(filterDuplicates)) outside 0x00...0x02")
        }
        var parameters: [UInt8] = [enable ? 0x01 : 0x00, filterDuplicates]
        parameters.appendLE(duration)
        parameters.appendLE(period)
        return HCICommand(unchecked: .leSetExtendedScanEnable, parameters)
    }

    /// HCI_LE_Set_Advertising_Parameters (7.8.5).
    public static func leSetAdvertisingParameters(_ advertising: LEAdvertisingParameters) throws(HCIError) -> HCICommand {
        try advertising.validate()
        var parameters: [UInt8] = []
        parameters.appendLE(advertising.intervalMin)
        parameters.appendLE(advertising.intervalMax)
        parameters.append(advertising.type.rawValue)
        parameters.append(advertising.ownAddressType.rawValue)
        parameters.append(advertising.peerAddressType.rawValue)
        parameters.append(contentsOf: advertising.peerAddress.wireBytes)
        parameters.append(advertising.channelMap)
        parameters.append(advertising.filterPolicy)
        return HCICommand(unchecked: .leSetAdvertisingParameters, parameters)
    }

    /// HCI_LE_Set_Advertising_Data (7.8.7): significant length, then the data zero-padded to 31 bytes.
    public static func leSetAdvertisingData(_ data: [UInt8]) throws(HCIError) -> HCICommand {
        HCICommand(unchecked: .leSetAdvertisingData, try paddedAdvertisingData(data, what: "advertising data"))
    }

    /// HCI_LE_Set_Scan_Response_Data (7.8.8): significant length, then the data zero-padded to 31 bytes.
    public static func leSetScanResponseData(_ data: [UInt8]) throws(HCIError) -> HCICommand {
        HCICommand(unchecked: .leSetScanResponseData, try paddedAdvertisingData(data, what: "scan response data"))
    }

    /// HCI_LE_Set_Advertising_Enable (7.8.9).
    public static func leSetAdvertisingEnable(_ enable: Bool) -> HCICommand {
        HCICommand(unchecked: .leSetAdvertisingEnable, [enable ? 0x01 : 0x00])
    }

    private static func paddedAdvertisingData(_ data: [UInt8], what: String) throws(HCIError) -> [UInt8] {
        guard data.count <= 31 else {
            throw HCIError(code: .invalidParameter, message: "\(what) is \(data.count) bytes; legacy advertising carries at most 31")
        }
        return [UInt8(data.count)] + data + [UInt8](repeating: 0, count: 31 - data.count)
    }
}
