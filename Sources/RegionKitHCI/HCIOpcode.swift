/// A 16-bit HCI command opcode: OGF (opcode group field, upper 6 bits) and
/// OCF (opcode command field, lower 10 bits). Core spec Vol 4 Part E 5.4.1.
///
/// ```swift
/// let opcode = HCIOpcode.leSetScanEnable      // 0x200C
/// opcode.ogf                                  // 0x08 (LE controller commands)
/// opcode.ocf                                  // 0x000C
/// HCIOpcode(ogf: 0x03, ocf: 0x0003) == .reset // true
/// ```
public struct HCIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Builds an opcode from its group and command fields; extra high bits are masked off.
    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// Opcode group field (6 bits): 0x01 link control, 0x03 controller & baseband,
    /// 0x04 informational, 0x08 LE controller, 0x3F vendor.
    public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    /// Opcode command field (10 bits).
    public var ocf: UInt16 { rawValue & 0x03FF }

    // Controller & Baseband (OGF 0x03)
    public static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    // Informational (OGF 0x04)
    public static let readLocalVersionInformation = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    public static let readBDADDR = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    // LE Controller (OGF 0x08)
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadLocalSupportedFeatures = HCIOpcode(ogf: 0x08, ocf: 0x0003)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)

    private static let names: [UInt16: String] = [
        setEventMask.rawValue: "HCI_Set_Event_Mask",
        reset.rawValue: "HCI_Reset",
        readLocalVersionInformation.rawValue: "HCI_Read_Local_Version_Information",
        readBDADDR.rawValue: "HCI_Read_BD_ADDR",
        leSetEventMask.rawValue: "HCI_LE_Set_Event_Mask",
        leReadLocalSupportedFeatures.rawValue: "HCI_LE_Read_Local_Supported_Features",
        leSetRandomAddress.rawValue: "HCI_LE_Set_Random_Address",
        leSetAdvertisingParameters.rawValue: "HCI_LE_Set_Advertising_Parameters",
        leSetAdvertisingData.rawValue: "HCI_LE_Set_Advertising_Data",
        leSetScanResponseData.rawValue: "HCI_LE_Set_Scan_Response_Data",
        leSetAdvertisingEnable.rawValue: "HCI_LE_Set_Advertising_Enable",
        leSetScanParameters.rawValue: "HCI_LE_Set_Scan_Parameters",
        leSetScanEnable.rawValue: "HCI_LE_Set_Scan_Enable",
        leSetExtendedScanParameters.rawValue: "HCI_LE_Set_Extended_Scan_Parameters",
        leSetExtendedScanEnable.rawValue: "HCI_LE_Set_Extended_Scan_Enable",
    ]

    /// The spec name (`HCI_LE_Set_Scan_Enable`), or nil for opcodes not named here.
    public var name: String? { Self.names[rawValue] }

    public var description: String {
        if let name { return "\(name) (\(hex(rawValue)))" }
        return "opcode \(hex(rawValue)) (OGF \(hex(ogf)), OCF \(hex(ocf)))"
    }
}
