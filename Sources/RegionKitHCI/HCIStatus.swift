/// An HCI status / error code, as carried in Command Complete, Command Status
/// and connection events. Core spec Vol 1 Part F ("Controller error codes").
///
/// Modelled on GRDB's `ResultCode`: a plain value, so a code this library does
/// not know is still representable ("unknown status 0xNN") and never traps.
///
/// ```swift
/// let status = HCIStatus(rawValue: 0x0C)
/// status == .commandDisallowed   // true
/// status.name                    // "Command Disallowed"
/// HCIStatus(rawValue: 0xEE).name // "unknown status 0xEE"
/// ```
public struct HCIStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8

    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// True for ``success`` (0x00).
    public var isSuccess: Bool { rawValue == 0 }
    /// 0x00 Success.
    public static let success = HCIStatus(rawValue: 0x00)
    /// 0x01 Unknown HCI Command.
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    /// 0x02 Unknown Connection Identifier.
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    /// 0x03 Hardware Failure.
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    /// 0x04 Page Timeout.
    public static let pageTimeout = HCIStatus(rawValue: 0x04)
    /// 0x05 Authentication Failure.
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    /// 0x06 PIN or Key Missing.
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    /// 0x07 Memory Capacity Exceeded.
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    /// 0x08 Connection Timeout.
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    /// 0x09 Connection Limit Exceeded.
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    /// 0x0A Synchronous Connection Limit To A Device Exceeded.
    public static let synchronousConnectionLimitExceeded = HCIStatus(rawValue: 0x0A)
    /// 0x0B Connection Already Exists.
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    /// 0x0C Command Disallowed.
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    /// 0x0D Connection Rejected due to Limited Resources.
    public static let connectionRejectedLimitedResources = HCIStatus(rawValue: 0x0D)
    /// 0x0E Connection Rejected Due To Security Reasons.
    public static let connectionRejectedSecurityReasons = HCIStatus(rawValue: 0x0E)
    /// 0x0F Connection Rejected due to Unacceptable BD_ADDR.
    public static let connectionRejectedUnacceptableAddress = HCIStatus(rawValue: 0x0F)
    /// 0x10 Connection Accept Timeout Exceeded.
    public static let connectionAcceptTimeoutExceeded = HCIStatus(rawValue: 0x10)
    /// 0x11 Unsupported Feature or Parameter Value.
    public static let unsupportedFeatureOrParameterValue = HCIStatus(rawValue: 0x11)
    /// 0x12 Invalid HCI Command Parameters.
    public static let invalidHCICommandParameters = HCIStatus(rawValue: 0x12)
    /// 0x13 Remote User Terminated Connection.
    public static let remoteUserTerminatedConnection = HCIStatus(rawValue: 0x13)
    /// 0x14 Remote Device Terminated Connection due to Low Resources.
    public static let remoteDeviceTerminatedLowResources = HCIStatus(rawValue: 0x14)
    /// 0x15 Remote Device Terminated Connection due to Power Off.
    public static let remoteDeviceTerminatedPowerOff = HCIStatus(rawValue: 0x15)
    /// 0x16 Connection Terminated By Local Host.
    public static let connectionTerminatedByLocalHost = HCIStatus(rawValue: 0x16)
    /// 0x17 Repeated Attempts.
    public static let repeatedAttempts = HCIStatus(rawValue: 0x17)
    /// 0x18 Pairing Not Allowed.
    public static let pairingNotAllowed = HCIStatus(rawValue: 0x18)
    /// 0x19 Unknown LMP PDU.
    public static let unknownLMPPDU = HCIStatus(rawValue: 0x19)
    /// 0x1A Unsupported Remote Feature.
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    /// 0x1B SCO Offset Rejected.
    public static let scoOffsetRejected = HCIStatus(rawValue: 0x1B)
    /// 0x1C SCO Interval Rejected.
    public static let scoIntervalRejected = HCIStatus(rawValue: 0x1C)
    /// 0x1D SCO Air Mode Rejected.
    public static let scoAirModeRejected = HCIStatus(rawValue: 0x1D)
    /// 0x1E Invalid LMP Parameters / Invalid LL Parameters.
    public static let invalidLLParameters = HCIStatus(rawValue: 0x1E)
    /// 0x1F Unspecified Error.
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    /// 0x20 Unsupported LMP Parameter Value / Unsupported LL Parameter Value.
    public static let unsupportedLLParameterValue = HCIStatus(rawValue: 0x20)
    /// 0x21 Role Change Not Allowed.
    public static let roleChangeNotAllowed = HCIStatus(rawValue: 0x21)
    /// 0x22 LMP Response Timeout / LL Response Timeout.
    public static let llResponseTimeout = HCIStatus(rawValue: 0x22)
    /// 0x23 LMP Error Transaction Collision / LL Procedure Collision.
    public static let llProcedureCollision = HCIStatus(rawValue: 0x23)
    /// 0x24 LMP PDU Not Allowed.
    public static let lmpPDUNotAllowed = HCIStatus(rawValue: 0x24)
    /// 0x25 Encryption Mode Not Acceptable.
    public static let encryptionModeNotAcceptable = HCIStatus(rawValue: 0x25)
    /// 0x26 Link Key cannot be Changed.
    public static let linkKeyCannotBeChanged = HCIStatus(rawValue: 0x26)
    /// 0x27 Requested QoS Not Supported.
    public static let requestedQoSNotSupported = HCIStatus(rawValue: 0x27)
    /// 0x28 Instant Passed.
    public static let instantPassed = HCIStatus(rawValue: 0x28)
    /// 0x29 Pairing With Unit Key Not Supported.
    public static let pairingWithUnitKeyNotSupported = HCIStatus(rawValue: 0x29)
    /// 0x2A Different Transaction Collision.
    public static let differentTransactionCollision = HCIStatus(rawValue: 0x2A)
    /// 0x2C QoS Unacceptable Parameter.
    public static let qosUnacceptableParameter = HCIStatus(rawValue: 0x2C)
    /// 0x2D QoS Rejected.
    public static let qosRejected = HCIStatus(rawValue: 0x2D)
    /// 0x2E Channel Classification Not Supported.
    public static let channelClassificationNotSupported = HCIStatus(rawValue: 0x2E)
    /// 0x2F Insufficient Security.
    public static let insufficientSecurity = HCIStatus(rawValue: 0x2F)
    /// 0x30 Parameter Out Of Mandatory Range.
    public static let parameterOutOfMandatoryRange = HCIStatus(rawValue: 0x30)
    /// 0x32 Role Switch Pending.
    public static let roleSwitchPending = HCIStatus(rawValue: 0x32)
    /// 0x34 Reserved Slot Violation.
    public static let reservedSlotViolation = HCIStatus(rawValue: 0x34)
    /// 0x35 Role Switch Failed.
    public static let roleSwitchFailed = HCIStatus(rawValue: 0x35)
    /// 0x36 Extended Inquiry Response Too Large.
    public static let extendedInquiryResponseTooLarge = HCIStatus(rawValue: 0x36)
    /// 0x37 Secure Simple Pairing Not Supported By Host.
    public static let secureSimplePairingNotSupportedByHost = HCIStatus(rawValue: 0x37)
    /// 0x38 Host Busy - Pairing.
    public static let hostBusyPairing = HCIStatus(rawValue: 0x38)
    /// 0x39 Connection Rejected due to No Suitable Channel Found.
    public static let connectionRejectedNoSuitableChannel = HCIStatus(rawValue: 0x39)
    /// 0x3A Controller Busy.
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    /// 0x3B Unacceptable Connection Parameters.
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    /// 0x3C Advertising Timeout.
    public static let advertisingTimeout = HCIStatus(rawValue: 0x3C)
    /// 0x3D Connection Terminated due to MIC Failure.
    public static let connectionTerminatedMICFailure = HCIStatus(rawValue: 0x3D)
    /// 0x3E Connection Failed to be Established / Synchronization Timeout.
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)
    /// 0x40 Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging.
    public static let coarseClockAdjustmentRejected = HCIStatus(rawValue: 0x40)
    /// 0x41 Type0 Submap Not Defined.
    public static let type0SubmapNotDefined = HCIStatus(rawValue: 0x41)
    /// 0x42 Unknown Advertising Identifier.
    public static let unknownAdvertisingIdentifier = HCIStatus(rawValue: 0x42)
    /// 0x43 Limit Reached.
    public static let limitReached = HCIStatus(rawValue: 0x43)
    /// 0x44 Operation Cancelled by Host.
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)
    /// 0x45 Packet Too Long.
    public static let packetTooLong = HCIStatus(rawValue: 0x45)
    /// 0x46 Too Late.
    public static let tooLate = HCIStatus(rawValue: 0x46)
    /// 0x47 Too Early.
    public static let tooEarly = HCIStatus(rawValue: 0x47)

    private static let names: [UInt8: String] = [
        0x00: "Success",
        0x01: "Unknown HCI Command",
        0x02: "Unknown Connection Identifier",
        0x03: "Hardware Failure",
        0x04: "Page Timeout",
        0x05: "Authentication Failure",
        0x06: "PIN or Key Missing",
        0x07: "Memory Capacity Exceeded",
        0x08: "Connection Timeout",
        0x09: "Connection Limit Exceeded",
        0x0A: "Synchronous Connection Limit To A Device Exceeded",
        0x0B: "Connection Already Exists",
        0x0C: "Command Disallowed",
        0x0D: "Connection Rejected due to Limited Resources",
        0x0E: "Connection Rejected Due To Security Reasons",
        0x0F: "Connection Rejected due to Unacceptable BD_ADDR",
        0x10: "Connection Accept Timeout Exceeded",
        0x11: "Unsupported Feature or Parameter Value",
        0x12: "Invalid HCI Command Parameters",
        0x13: "Remote User Terminated Connection",
        0x14: "Remote Device Terminated Connection due to Low Resources",
        0x15: "Remote Device Terminated Connection due to Power Off",
        0x16: "Connection Terminated By Local Host",
        0x17: "Repeated Attempts",
        0x18: "Pairing Not Allowed",
        0x19: "Unknown LMP PDU",
        0x1A: "Unsupported Remote Feature",
        0x1B: "SCO Offset Rejected",
        0x1C: "SCO Interval Rejected",
        0x1D: "SCO Air Mode Rejected",
        0x1E: "Invalid LMP Parameters / Invalid LL Parameters",
        0x1F: "Unspecified Error",
        0x20: "Unsupported LMP Parameter Value / Unsupported LL Parameter Value",
        0x21: "Role Change Not Allowed",
        0x22: "LMP Response Timeout / LL Response Timeout",
        0x23: "LMP Error Transaction Collision / LL Procedure Collision",
        0x24: "LMP PDU Not Allowed",
        0x25: "Encryption Mode Not Acceptable",
        0x26: "Link Key cannot be Changed",
        0x27: "Requested QoS Not Supported",
        0x28: "Instant Passed",
        0x29: "Pairing With Unit Key Not Supported",
        0x2A: "Different Transaction Collision",
        0x2C: "QoS Unacceptable Parameter",
        0x2D: "QoS Rejected",
        0x2E: "Channel Classification Not Supported",
        0x2F: "Insufficient Security",
        0x30: "Parameter Out Of Mandatory Range",
        0x32: "Role Switch Pending",
        0x34: "Reserved Slot Violation",
        0x35: "Role Switch Failed",
        0x36: "Extended Inquiry Response Too Large",
        0x37: "Secure Simple Pairing Not Supported By Host",
        0x38: "Host Busy - Pairing",
        0x39: "Connection Rejected due to No Suitable Channel Found",
        0x3A: "Controller Busy",
        0x3B: "Unacceptable Connection Parameters",
        0x3C: "Advertising Timeout",
        0x3D: "Connection Terminated due to MIC Failure",
        0x3E: "Connection Failed to be Established / Synchronization Timeout",
        0x40: "Coarse Clock Adjustment Rejected but Will Try to Adjust Using Clock Dragging",
        0x41: "Type0 Submap Not Defined",
        0x42: "Unknown Advertising Identifier",
        0x43: "Limit Reached",
        0x44: "Operation Cancelled by Host",
        0x45: "Packet Too Long",
        0x46: "Too Late",
        0x47: "Too Early",
    ]

    /// The spec's name for the code, or "unknown status 0xNN".
    public var name: String { Self.names[rawValue] ?? "unknown status \(hex(rawValue))" }

    public var description: String {
        Self.names[rawValue] == nil ? name : "\(name) (\(hex(rawValue)))"
    }
}
