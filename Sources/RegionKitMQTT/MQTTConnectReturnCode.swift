/// The return code of a CONNACK (MQTT 3.1.1 §3.2.2.3), kept raw so that codes a broker invents still
/// surface (as `MQTTError.connectionRefused`) instead of failing to decode.
///
/// ```swift
/// if case .connectionRefused(let code) = error, code == .notAuthorized { print("check the password file") }
/// ```
public struct MQTTConnectReturnCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00 Connection accepted.
    public static let accepted = MQTTConnectReturnCode(rawValue: 0x00)
    /// 0x01 The server does not support the level of the MQTT protocol requested.
    public static let unacceptableProtocolVersion = MQTTConnectReturnCode(rawValue: 0x01)
    /// 0x02 The client identifier is correct UTF-8 but not allowed by the server.
    public static let identifierRejected = MQTTConnectReturnCode(rawValue: 0x02)
    /// 0x03 The network connection was made but the MQTT service is unavailable.
    public static let serverUnavailable = MQTTConnectReturnCode(rawValue: 0x03)
    /// 0x04 The data in the user name or password is malformed.
    public static let badUsernameOrPassword = MQTTConnectReturnCode(rawValue: 0x04)
    /// 0x05 The client is not authorized to connect.
    public static let notAuthorized = MQTTConnectReturnCode(rawValue: 0x05)

    public var description: String {
        switch self {
        case .accepted: "accepted (0)"
        case .unacceptableProtocolVersion: "unacceptable protocol version (1)"
        case .identifierRejected: "identifier rejected (2)"
        case .serverUnavailable: "server unavailable (3)"
        case .badUsernameOrPassword: "bad user name or password (4)"
        case .notAuthorized: "not authorized (5)"
        default: "unknown return code (\(rawValue))"
        }
    }
}
