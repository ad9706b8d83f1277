/// An HCI event packet decoded into a value (Core spec Vol 4 Part E 5.4.4, 7.7).
///
/// Decoding takes the event packet without its H4 type byte: event code (1),
/// parameter total length (1), parameters. Offsets in thrown ``HCIError``s
/// count from the event code (offset 0). Decoding never traps: any input
/// yields a value or an error.
///
/// Fixed-size events (Command Status, Disconnection Complete, Hardware Error)
/// ignore parameters beyond those they define, as the spec asks hosts to do for
/// forward compatibility; advertising reports must account for every byte.
///
/// ```swift
/// let event = try HCIEvent(decoding: [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
/// if case .commandComplete(_, let opcode, let returned) = event {
///     opcode == .reset                  // true
///     HCIStatus(rawValue: returned[0])  // success
/// }
/// event.commandStatusCode               // success
/// ```
public enum HCIEvent: Hashable, Sendable {
    /// Event 0x0E. `returnParameters` start with the status byte for nearly every command.
    case commandComplete(numPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8])
    /// Event 0x0F.
    case commandStatus(status: HCIStatus, numPackets: UInt8, opcode: HCIOpcode)
    /// Event 0x05.
    case disconnectionComplete(status: HCIStatus, connectionHandle: UInt16, reason: HCIStatus)
    /// Event 0x10.
    case hardwareError(code: UInt8)
    /// Event 0x3E.
    case leMeta(HCILEMetaEvent)
    /// Any other event, with its parameters.
    case unknown(code: UInt8, parameters: [UInt8])

    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F
    public static let disconnectionCompleteCode: UInt8 = 0x05
    public static let hardwareErrorCode: UInt8 = 0x10
    public static let leMetaCode: UInt8 = 0x3E

    /// Decodes an event packet (event code, length, parameters; no H4 type byte).
    public init(decoding bytes: [UInt8], advertisingReportLayout: LEAdvertisingReportLayout = .fieldArrays) throws(HCIError) {
        var header = ByteReader(bytes)
        let code = try header.uint8("event code")
        let length = Int(try header.uint8("event parameter length"))
        guard header.remaining == length else {
            throw HCIError(
                code: .lengthMismatch,
                message: "event \(hex(code)) parameter length says \(length) byte(s) but \(header.remaining) follow",
                offset: 1
            )
        }
        var reader = ByteReader(header.rest(), baseOffset: 2)
        switch code {
        case Self.commandCompleteCode:
            let numPackets = try reader.uint8("Num_HCI_Command_Packets")
            let opcode = HCIOpcode(rawValue: try reader.uint16LE("Command_Opcode"))
            self = .commandComplete(numPackets: numPackets, opcode: opcode, returnParameters: reader.rest())
        case Self.commandStatusCode:
            let status = HCIStatus(rawValue: try reader.uint8("Status"))
            let numPackets = try reader.uint8("Num_HCI_Command_Packets")
            let opcode = HCIOpcode(rawValue: try reader.uint16LE("Command_Opcode"))
            self = .commandStatus(status: status, numPackets: numPackets, opcode: opcode)
        case Self.disconnectionCompleteCode:
            let status = HCIStatus(rawValue: try reader.uint8("Status"))
            let handle = try reader.uint16LE("Connection_Handle")
            let reason = HCIStatus(rawValue: try reader.uint8("Reason"))
            self = .disconnectionComplete(status: status, connectionHandle: handle & 0x0FFF, reason: reason)
        case Self.hardwareErrorCode:
            self = .hardwareError(code: try reader.uint8("Hardware_Code"))
        case Self.leMetaCode:
            let subevent = try reader.uint8("Subevent_Code")
            switch subevent {
            case 0x02:
                self = .leMeta(.advertisingReport(try LEAdvertisingReport.decodeReports(&reader, layout: advertisingReportLayout)))
            case 0x0D:
                self = .leMeta(.extendedAdvertisingReport(try LEExtendedAdvertisingReport.decodeReports(&reader)))
            default:
                self = .leMeta(.unknown(subevent: subevent, parameters: reader.rest()))
            }
        default:
            self = .unknown(code: code, parameters: reader.rest())
        }
    }

    /// The event code.
    public var code: UInt8 {
        switch self {
        case .commandComplete: Self.commandCompleteCode
        case .commandStatus: Self.commandStatusCode
        case .disconnectionComplete: Self.disconnectionCompleteCode
        case .hardwareError: Self.hardwareErrorCode
        case .leMeta: Self.leMetaCode
        case .unknown(let code, _): code
        }
    }

    /// Encodes the event packet (code, length, parameters); advertising reports in `layout`.
    /// Parameters longer than 255 bytes are cut at 255 (the length byte's limit).
    public func encoded(advertisingReportLayout layout: LEAdvertisingReportLayout = .fieldArrays) -> [UInt8] {
        var parameters: [UInt8] = []
        switch self {
        case .commandComplete(let numPackets, let opcode, let returned):
            parameters.append(numPackets)
            parameters.appendLE(opcode.rawValue)
            parameters.append(contentsOf: returned)
        case .commandStatus(let status, let numPackets, let opcode):
            parameters = [status.rawValue, numPackets]
            parameters.appendLE(opcode.rawValue)
        case .disconnectionComplete(let status, let handle, let reason):
            parameters = [status.rawValue]
            parameters.appendLE(handle)
            parameters.append(reason.rawValue)
        case .hardwareError(let code):
            parameters = [code]
        case .leMeta(let meta):
            parameters = [meta.subevent]
            switch meta {
            case .advertisingReport(let reports):
                parameters += LEAdvertisingReport.encodeReports(reports, layout: layout)
            case .extendedAdvertisingReport(let reports):
                parameters += LEExtendedAdvertisingReport.encodeReports(reports)
            case .unknown(_, let rest):
                parameters += rest
            }
        case .unknown(_, let rest):
            parameters = rest
        }
        if parameters.count > 255 { parameters = Array(parameters.prefix(255)) }
        return [code, UInt8(parameters.count)] + parameters
    }

    /// For Command Complete: the first return parameter as a status (nil if there is none);
    /// for Command Status: its status; otherwise nil.
    public var commandStatusCode: HCIStatus? {
        switch self {
        case .commandComplete(_, _, let returned): returned.first.map { HCIStatus(rawValue: $0) }
        case .commandStatus(let status, _, _): status
        default: nil
        }
    }

    /// The opcode a Command Complete / Command Status answers, else nil.
    public var commandOpcode: HCIOpcode? {
        switch self {
        case .commandComplete(_, let opcode, _), .commandStatus(_, _, let opcode): opcode
        default: nil
        }
    }

    /// The advertising reports of this event as unified ``Advertisement`` values (empty for other events).
    public var advertisements: [Advertisement] {
        switch self {
        case .leMeta(.advertisingReport(let reports)): reports.map(Advertisement.init(legacy:))
        case .leMeta(.extendedAdvertisingReport(let reports)): reports.map(Advertisement.init(extended:))
        default: []
        }
    }
}
