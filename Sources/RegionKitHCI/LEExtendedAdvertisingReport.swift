/// One report of the HCI LE Extended Advertising Report event
/// (LE Meta subevent 0x0D, Core spec Vol 4 Part E 7.7.65.13).
///
/// Reports follow one another whole: Event_Type (2), Address_Type, Address (6),
/// Primary_PHY, Secondary_PHY, Advertising_SID, TX_Power, RSSI,
/// Periodic_Advertising_Interval (2), Direct_Address_Type, Direct_Address (6),
/// Data_Length, Data — 24 fixed bytes plus the data.
///
/// ```swift
/// if case .leMeta(.extendedAdvertisingReport(let reports)) = event {
///     for report in reports where report.eventType.contains(.legacy) {
///         print(report.address, report.rssi ?? "n/a", report.txPower ?? "n/a")
///     }
/// }
/// ```
public struct LEExtendedAdvertisingReport: Hashable, Sendable {
    /// Event_Type bits 0...4 plus the data status in bits 5...6.
    public struct EventType: OptionSet, Hashable, Sendable {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let connectable = EventType(rawValue: 1 << 0)
        public static let scannable = EventType(rawValue: 1 << 1)
        public static let directed = EventType(rawValue: 1 << 2)
        public static let scanResponse = EventType(rawValue: 1 << 3)
        /// The PDU was a legacy advertising PDU.
        public static let legacy = EventType(rawValue: 1 << 4)

        /// Bits 5...6: 0 complete, 1 incomplete with more to come, 2 incomplete and truncated.
        public var dataStatus: UInt8 { UInt8(truncatingIfNeeded: (rawValue >> 5) & 0x03) }
        /// True when the data is complete (data status 0).
        public var isComplete: Bool { dataStatus == 0 }
    }

    public var eventType: EventType
    public var addressType: LEAddressType
    public var address: BluetoothAddress
    /// 0x01 LE 1M, 0x03 LE Coded.
    public var primaryPHY: UInt8
    /// 0x00 none, 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
    public var secondaryPHY: UInt8
    /// 0x00...0x0F, 0xFF = no ADI field.
    public var advertisingSID: UInt8
    /// TX power as sent: -127...+20 dBm, 127 = not available.
    public var rawTXPower: Int8
    /// RSSI as sent: -127...+20 dBm, 127 = not available.
    public var rawRSSI: Int8
    /// In 1.25 ms units; 0 = no periodic advertising.
    public var periodicAdvertisingInterval: UInt16
    public var directAddressType: LEAddressType
    public var directAddress: BluetoothAddress
    public var data: [UInt8]

    public init(
        eventType: EventType, addressType: LEAddressType, address: BluetoothAddress,
        primaryPHY: UInt8 = 0x01, secondaryPHY: UInt8 = 0x00, advertisingSID: UInt8 = 0xFF,
        rawTXPower: Int8 = 127, rawRSSI: Int8 = 127, periodicAdvertisingInterval: UInt16 = 0,
        directAddressType: LEAddressType = .public, directAddress: BluetoothAddress = .zero, data: [UInt8]
    ) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.advertisingSID = advertisingSID
        self.rawTXPower = rawTXPower
        self.rawRSSI = rawRSSI
        self.periodicAdvertisingInterval = periodicAdvertisingInterval
        self.directAddressType = directAddressType
        self.directAddress = directAddress
        self.data = data
    }

    /// RSSI in dBm, nil when reported as 127.
    public var rssi: Int8? { rawRSSI == 127 ? nil : rawRSSI }
    /// TX power in dBm, nil when reported as 127.
    public var txPower: Int8? { rawTXPower == 127 ? nil : rawTXPower }

    static let fixedSize = 24

    static func decodeReports(_ reader: inout ByteReader) throws(HCIError) -> [LEExtendedAdvertisingReport] {
        let countOffset = reader.offset
        let count = Int(try reader.uint8("Num_Reports"))
        guard reader.remaining >= count * fixedSize else {
            throw HCIError(
                code: .countOverrun,
                message: "Num_Reports \(count) needs at least \(count * fixedSize) bytes but \(reader.remaining) remain",
                offset: countOffset
            )
        }
        var reports: [LEExtendedAdvertisingReport] = []
        for index in 0..<count {
            let eventType = EventType(rawValue: try reader.uint16LE("Event_Type"))
            let addressType = LEAddressType(rawValue: try reader.uint8("Address_Type"))
            let address = try reader.address("Address")
            let primary = try reader.uint8("Primary_PHY")
            let secondary = try reader.uint8("Secondary_PHY")
            let sid = try reader.uint8("Advertising_SID")
            let tx = try reader.int8("TX_Power")
            let rssi = try reader.int8("RSSI")
            let interval = try reader.uint16LE("Periodic_Advertising_Interval")
            let directType = LEAddressType(rawValue: try reader.uint8("Direct_Address_Type"))
            let direct = try reader.address("Direct_Address")
            let lengthOffset = reader.offset
            let length = Int(try reader.uint8("Data_Length"))
            let needed = length + (count - index - 1) * fixedSize
            guard reader.remaining >= needed else {
                throw HCIError(
                    code: .dataLengthOverrun,
                    message: "Data_Length of extended report \(index) = \(length) runs past the end of the event",
                    offset: lengthOffset,
                    index: index
                )
            }
            let data = try reader.bytes(length, "Data")
            reports.append(LEExtendedAdvertisingReport(
                eventType: eventType, addressType: addressType, address: address,
                primaryPHY: primary, secondaryPHY: secondary, advertisingSID: sid,
                rawTXPower: tx, rawRSSI: rssi, periodicAdvertisingInterval: interval,
                directAddressType: directType, directAddress: direct, data: data
            ))
        }
        guard reader.isAtEnd else {
            throw HCIError(
                code: .lengthMismatch,
                message: "\(reader.remaining) byte(s) left over after \(count) extended advertising report(s)",
                offset: reader.offset
            )
        }
        return reports
    }

    static func encodeReports(_ reports: [LEExtendedAdvertisingReport]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: reports.count)]
        for report in reports {
            bytes.appendLE(report.eventType.rawValue)
            bytes.append(report.addressType.rawValue)
            bytes.append(contentsOf: report.address.wireBytes)
            bytes.append(report.primaryPHY)
            bytes.append(report.secondaryPHY)
            bytes.append(report.advertisingSID)
            bytes.append(UInt8(bitPattern: report.rawTXPower))
            bytes.append(UInt8(bitPattern: report.rawRSSI))
            bytes.appendLE(report.periodicAdvertisingInterval)
            bytes.append(report.directAddressType.rawValue)
            bytes.append(contentsOf: report.directAddress.wireBytes)
            bytes.append(UInt8(truncatingIfNeeded: report.data.count))
            bytes.append(contentsOf: report.data)
        }
        return bytes
    }
}
