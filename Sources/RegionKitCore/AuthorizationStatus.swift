/// Whether this process may use a configured input source, as Core Location's authorization status.
///
/// On Linux "authorized" means the source is usable right now: the Bluetooth adapter exists and is
/// powered and the process has `CAP_NET_RAW`, or gpsd is reachable. When it is not, the reason says
/// why in words a person can act on.
///
/// ```swift
/// if case .denied(let reason) = manager.authorizationStatus { print("cannot monitor: \(reason)") }
/// ```
public enum AuthorizationStatus: Hashable, Sendable, Codable, CustomStringConvertible {
    /// No source has reported yet.
    case notDetermined
    /// The source exists but this process may not use it (permissions), with the reason.
    case denied(reason: String)
    /// The source is missing or switched off (no adapter, adapter powered off, gpsd down).
    case restricted(reason: String)
    /// The source is usable.
    case authorized

    public var isAuthorized: Bool { self == .authorized }

    public var description: String {
        switch self {
        case .notDetermined: "notDetermined"
        case .denied(let reason): "denied (\(reason))"
        case .restricted(let reason): "restricted (\(reason))"
        case .authorized: "authorized"
        }
    }
}
