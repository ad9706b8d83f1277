import Foundation

/// The error every RegionKit layer reports: a stable code, a message naming what and where, and
/// an optional underlying cause.
///
/// Codes are open-ended `RawRepresentable` values with named constants (a code written by a newer
/// version is still a value, never a crash), as GRDB's `ResultCode`; the cause is the underlying
/// error itself, so callers can still inspect it (`error.cause as? DecodingError`). Every RegionKit
/// error type follows this shape: `code`, `message`, optional `cause: (any Error)?`.
///
/// ```swift
/// do {
///     _ = try BeaconRegion(identifier: "door", uuidString: "not-a-uuid")
/// } catch let error as RegionKitError where error.code == .invalidRegion {
///     print(error.message) // "region 'door': proximity UUID 'not-a-uuid' is not a UUID ..."
/// }
/// ```
public struct RegionKitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable error code.
    public struct Code: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A region value is invalid (bad UUID, minor without major, bad coordinates, radius...).
        public static let invalidRegion = Code(rawValue: "invalidRegion")
        /// Core Location's `regionMonitoringFailure`: the monitored-region limit was reached.
        public static let regionMonitoringFailure = Code(rawValue: "regionMonitoringFailure")
        /// The region's radius exceeds `maximumRegionMonitoringDistance`.
        public static let radiusTooLarge = Code(rawValue: "radiusTooLarge")
        /// The source a region kind needs (Bluetooth adapter, location source) is unavailable.
        public static let sourceUnavailable = Code(rawValue: "sourceUnavailable")
        /// The operation names a region that is not monitored.
        public static let regionNotMonitored = Code(rawValue: "regionNotMonitored")
        /// Ranging failed (no source, source went away).
        public static let rangingUnavailable = Code(rawValue: "rangingUnavailable")
        /// Bytes that were expected to be an iBeacon frame are not one.
        public static let malformedFrame = Code(rawValue: "malformedFrame")
        /// A scenario, configuration or input file (or a stored row) is malformed.
        public static let malformedInput = Code(rawValue: "malformedInput")
        /// The store could not be opened, read or written (I/O, locking, a full disk, SQLite).
        public static let storeFailed = Code(rawValue: "storeFailed")
        /// A command-line or API argument is invalid.
        public static let invalidArgument = Code(rawValue: "invalidArgument")
        /// A cluster member's identity or configuration conflicts with the running cluster:
        /// another live process uses its member name, or the cluster has another partition count.
        /// Retrying cannot help; the member stops.
        public static let clusterConflict = Code(rawValue: "clusterConflict")
        /// The service is stopping and did not carry the operation out (a region write sent while
        /// the daemon stopped before restoring its regions). Retry once it runs again.
        public static let stopping = Code(rawValue: "stopping")

        public var description: String { rawValue }
    }

    public var code: Code
    /// What went wrong, naming the value and where it came from.
    public var message: String
    /// The lower-level error that caused this one, if any.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// Equal when code, message and the cause's description are (an `any Error` has no equality).
    public static func == (lhs: RegionKitError, rhs: RegionKitError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.cause.map { "\($0)" } == rhs.cause.map { "\($0)" }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public var description: String {
        "\(code): \(detailedMessage)"
    }

    /// The message, then the cause in parentheses when there is one: what a command prints and
    /// the daemon logs.
    ///
    /// ```swift
    /// error.detailedMessage   // "/tmp: cannot read the scenario file (Is a directory)"
    /// ```
    public var detailedMessage: String {
        guard let cause else { return message }
        return "\(message) (\(Self.describe(cause)))"
    }

    /// A cause as a person reads it: a file-system error from Foundation as the system's reason
    /// (`Is a directory`, `Permission denied`) instead of its whole `Error Domain=NSCocoaErrorDomain
    /// Code=256 "(null)" UserInfo={…}`; any other error as it describes itself.
    public static func describe(_ cause: any Error) -> String {
        if let error = cause as? RegionKitError { return error.detailedMessage }
        var current: NSError? = cause as NSError
        var depth = 0
        while let error = current, depth < 8 {
            if error.domain == NSPOSIXErrorDomain, let reason = strerror(Int32(truncatingIfNeeded: error.code)) {
                return String(cString: reason)
            }
            // (On Linux the underlying error is kept as a Swift `Error`: `as? NSError` finds none.)
            current = (error.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
            depth += 1
        }
        return "\(cause)"
    }
}
