import RegionKitCore
import RegionKitHCI

/// What went wrong between RegionKit and a Bluetooth controller: a command that got no answer, a
/// controller error status, a transport that failed or dropped, a capture file that cannot be
/// written, a configuration the controller cannot honour.
///
/// Every error names the command (opcode) or the transport it concerns, and keeps the underlying
/// `HCIError` as its ``cause``. ``authorizationStatus`` is what a scanner reports to the
/// `LocationManager` for it (spec §2: `monitoringDidFail` when the adapter is unusable).
///
/// ```swift
/// do {
///     try await scanner.start()
/// } catch {
///     print(error.code)     // commandTimedOut
///     print(error)          // "commandTimedOut: tcp:127.0.0.1:9000: HCI_LE_Set_Scan_Enable (0x200C): no Command Complete
///                           //  or Command Status within 2.0 seconds"
///     manager.setSourceStatus(error.authorizationStatus, for: .beacon)
/// }
/// ```
public struct BluetoothError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; compare with the static members.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The transport could not be opened (no kernel support, no adapter, nothing listening).
        public static let transportUnavailable = Code(rawValue: "transportUnavailable")
        /// The process may not use the adapter (CAP_NET_RAW / CAP_NET_ADMIN, device permissions).
        public static let permissionDenied = Code(rawValue: "permissionDenied")
        /// A command got neither Command Complete nor Command Status within its time limit.
        public static let commandTimedOut = Code(rawValue: "commandTimedOut")
        /// The controller answered a command with an error status.
        public static let controllerError = Code(rawValue: "controllerError")
        /// The controller reported a Hardware Error event.
        public static let hardwareError = Code(rawValue: "hardwareError")
        /// The transport failed or the controller went away while in use.
        public static let transportFailed = Code(rawValue: "transportFailed")
        /// The controller's answer could not be decoded.
        public static let malformedResponse = Code(rawValue: "malformedResponse")
        /// The controller lacks a feature the configuration demands (e.g. extended scanning).
        public static let unsupported = Code(rawValue: "unsupported")
        /// A parameter is out of range (interval, name length...).
        public static let invalidConfiguration = Code(rawValue: "invalidConfiguration")
        /// A capture file could not be created, written or read.
        public static let captureFailed = Code(rawValue: "captureFailed")
        /// The scanner/advertiser was stopped while the operation was under way.
        public static let stopped = Code(rawValue: "stopped")

        public var description: String { rawValue }
    }

    public var code: Code
    /// What went wrong, naming the command or transport.
    public var message: String
    /// The command concerned, if any.
    public var opcode: HCIOpcode?
    /// The controller's status for ``Code/controllerError``.
    public var status: HCIStatus?
    /// The lower-level error (usually an `HCIError`).
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, opcode: HCIOpcode? = nil, status: HCIStatus? = nil, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.opcode = opcode
        self.status = status
        self.cause = cause
    }

    /// Wraps a transport-level error, choosing the code from the HCI error's code.
    public init(transport error: any Error, _ context: String) {
        guard let hci = error as? HCIError else {
            self.init(.transportFailed, "\(context): \(error)", cause: error)
            return
        }
        let code: Code = switch hci.code {
        case .permissionDenied: .permissionDenied
        case .noBluetoothSupport, .noSuchAdapter, .connectionFailed, .invalidTransportSpecification: .transportUnavailable
        case .timedOut where context.hasPrefix("cannot open"): .transportUnavailable
        case .unknownPacketType, .truncated, .lengthMismatch, .countOverrun, .dataLengthOverrun, .invalidValue: .malformedResponse
        default: .transportFailed
        }
        // Transport messages often start with the transport's name, which the context ends with.
        let name = context.split(separator: " ").last.map(String.init) ?? ""
        let detail = !name.isEmpty && hci.message.hasPrefix(name + ": ") ? String(hci.message.dropFirst(name.count + 2)) : hci.message
        self.init(code, "\(context): \(detail)", cause: hci)
    }

    /// The status a scanner reports to the `LocationManager` for this error: `.denied` for a
    /// missing permission, `.restricted` (source missing or switched off) for everything else.
    public var authorizationStatus: AuthorizationStatus {
        code == .permissionDenied ? .denied(reason: message) : .restricted(reason: message)
    }

    /// The same error as a `RegionKitError` (`sourceUnavailable`), for layers that report those.
    public var regionKitError: RegionKitError {
        // An HCIError's message is already part of ours; its own cause (the failing system call) is not.
        let underlying: (any Error)? = if let hci = cause as? HCIError { hci.cause } else { cause }
        return RegionKitError(.sourceUnavailable, message, cause: underlying)
    }

    public var description: String { "\(code): \(message)" }
}
