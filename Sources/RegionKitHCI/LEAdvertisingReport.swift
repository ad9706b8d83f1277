/// One report of the legacy HCI LE Advertising Report event
/// (LE Meta subevent 0x02, Core spec Vol 4 Part E 7.7.65.2).
///
/// ```swift
/// if case .leMeta(.advertisingReport(let reports)) = try HCIEvent(decoding: eventBytes) {
///     for report in reports where report.eventType == .advNonconnInd {
///         print(report.address, report.rssi ?? "n/a", report.data)
///     }
/// }
/// ```
///
/// ## Layout of several reports in one event
///
/// The Core specification (v4.0 through v5.x, 7.7.65.2) lists the event's
/// parameters as arrays: `Num_Reports`, then `Event_Type[0..N-1]`,
/// `Address_Type[0..N-1]`, `Address[0..N-1]`, `Data_Length[0..N-1]`,
/// `Data[0..N-1]` (concatenated), `RSSI[0..N-1]`. That is
/// ``LEAdvertisingReportLayout/fieldArrays``, the default here. BlueZ, Zephyr
/// and Bumble instead read and write whole reports one after another
/// (``LEAdvertisingReportLayout/reportByReport``). With `Num_Reports == 1`,
/// which is what controllers send in practice, both layouts are byte-identical.
public struct LEAdvertisingReport: Hashable, Sendable {
    /// Event_Type of a legacy report.
    public struct EventType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Connectable and scannable undirected (ADV_IND).
        public static let advInd = EventType(rawValue: 0x00)
        /// Connectable directed (ADV_DIRECT_IND).
        public static let advDirectInd = EventType(rawValue: 0x01)
        /// Scannable undirected (ADV_SCAN_IND).
        public static let advScanInd = EventType(rawValue: 0x02)
        /// Non-connectable undirected (ADV_NONCONN_IND), what iBeacons send.
        public static let advNonconnInd = EventType(rawValue: 0x03)
        /// Scan response (SCAN_RSP).
        public static let scanRsp = EventType(rawValue: 0x04)

        public var description: String {
            switch rawValue {
            case 0x00: "ADV_IND"
            case 0x01: "ADV_DIRECT_IND"
            case 0x02: "ADV_SCAN_IND"
            case 0x03: "ADV_NONCONN_IND"
            case 0x04: "SCAN_RSP"
            default: "legacy event type \(hex(rawValue))"
            }
        }
    }

    public var eventType: EventType
    public var addressType: LEAddressType
    public var address: BluetoothAddress
    /// Advertising data (AD structures), 0...31 bytes from a conforming controller.
    public var data: [UInt8]
    /// The RSSI byte as sent: -127...+20 dBm, 127 = not available.
    public var rawRSSI: Int8

    public init(eventType: EventType, addressType: LEAddressType, address: BluetoothAddress, data: [UInt8], rawRSSI: Int8) {
        self.eventType = eventType
        self.addressType = addressType
        self.address = address
        self.data = data
        self.rawRSSI = rawRSSI
    }

    /// RSSI in dBm, nil when the controller reported 127 (not available).
    public var rssi: Int8? { rawRSSI == 127 ? nil : rawRSSI }

    /// Fixed bytes per report besides its data: type, address type, address (6), length, RSSI.
    static let fixedSize = 10

    /// Decodes the reports of subevent 0x02. `reader` is positioned on Num_Reports;
    /// offsets in errors are absolute (the reader's base offset).
    static func decodeReports(_ reader: inout ByteReader, layout: LEAdvertisingReportLayout) throws(HCIError) -> [LEAdvertisingReport] {
        let countOffset = reader.offset
        let count = Int(try reader.uint8("Num_Reports"))
        guard reader.remaining >= count * fixedSize else {
            throw HCIError(
                code: .countOverrun,
                message: "Num_Reports \(count) needs at least \(count * fixedSize) bytes but \(reader.remaining) remain",
                offset: countOffset
            )
        }
        let reports: [LEAdvertisingReport]
        switch layout {
        case .fieldArrays: reports = try decodeFieldArrays(&reader, count: count)
        case .reportByReport: reports = try decodeSequential(&reader, count: count)
        }
        guard reader.isAtEnd else {
            throw HCIError(
                code: .lengthMismatch,
                message: "\(reader.remaining) byte(s) left over after \(count) advertising report(s)",
                offset: reader.offset
            )
        }
        return reports
    }

    private static func decodeFieldArrays(_ reader: inout ByteReader, count: Int) throws(HCIError) -> [LEAdvertisingReport] {
        var types: [EventType] = []
        var addressTypes: [LEAddressType] = []
        var addresses: [BluetoothAddress] = []
        var lengths: [Int] = []
        for _ in 0..<count { types.append(EventType(rawValue: try reader.uint8("Event_Type"))) }
        for _ in 0..<count { addressTypes.append(LEAddressType(rawValue: try reader.uint8("Address_Type"))) }
        for _ in 0..<count { addresses.append(try reader.address("Address")) }
        let lengthsOffset = reader.offset
        for _ in 0..<count { lengths.append(Int(try reader.uint8("Data_Length"))) }
        // The data block and the RSSI array must fit in what is left.
        var budget = reader.remaining - count
        for (index, length) in lengths.enumerated() {
            budget -= length
            if budget < 0 {
                throw HCIError(
                    code: .dataLengthOverrun,
                    message: "Data_Length[\(index)] = \(length) runs past the end of the event (the \(count) RSSI byte(s) must still follow)",
                    offset: lengthsOffset + index,
                    index: index
                )
            }
        }
        var datas: [[UInt8]] = []
        for length in lengths { datas.append(try reader.bytes(length, "Data")) }
        var reports: [LEAdvertisingReport] = []
        for index in 0..<count {
            let rssi = try reader.int8("RSSI")
            reports.append(LEAdvertisingReport(
                eventType: types[index], addressType: addressTypes[index], address: addresses[index],
                data: datas[index], rawRSSI: rssi
            ))
        }
        return reports
    }

    private static func decodeSequential(_ reader: inout ByteReader, count: Int) throws(HCIError) -> [LEAdvertisingReport] {
        var reports: [LEAdvertisingReport] = []
        for index in 0..<count {
            let type = EventType(rawValue: try reader.uint8("Event_Type"))
            let addressType = LEAddressType(rawValue: try reader.uint8("Address_Type"))
            let address = try reader.address("Address")
            let lengthOffset = reader.offset
            let length = Int(try reader.uint8("Data_Length"))
            // This report's data and RSSI, plus the fixed part of every later report.
            let needed = length + 1 + (count - index - 1) * fixedSize
            guard reader.remaining >= needed else {
                throw HCIError(
                    code: .dataLengthOverrun,
                    message: "Data_Length of report \(index) = \(length) runs past the end of the event",
                    offset: lengthOffset,
                    index: index
                )
            }
            let data = try reader.bytes(length, "Data")
            let rssi = try reader.int8("RSSI")
            reports.append(LEAdvertisingReport(eventType: type, addressType: addressType, address: address, data: data, rawRSSI: rssi))
        }
        return reports
    }

    /// Encodes Num_Reports and the reports in the given layout.
    static func encodeReports(_ reports: [LEAdvertisingReport], layout: LEAdvertisingReportLayout) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: reports.count)]
        switch layout {
        case .fieldArrays:
            for report in reports { bytes.append(report.eventType.rawValue) }
            for report in reports { bytes.append(report.addressType.rawValue) }
            for report in reports { bytes.append(contentsOf: report.address.wireBytes) }
            for report in reports { bytes.append(UInt8(truncatingIfNeeded: report.data.count)) }
            for report in reports { bytes.append(contentsOf: report.data) }
            for report in reports { bytes.append(UInt8(bitPattern: report.rawRSSI)) }
        case .reportByReport:
            for report in reports {
                bytes.append(report.eventType.rawValue)
                bytes.append(report.addressType.rawValue)
                bytes.append(contentsOf: report.address.wireBytes)
                bytes.append(UInt8(truncatingIfNeeded: report.data.count))
                bytes.append(contentsOf: report.data)
                bytes.append(UInt8(bitPattern: report.rawRSSI))
            }
        }
        return bytes
    }
}
