import Foundation

/// `error.localizedDescription` says what ``RegionKitError/description`` says (code and message,
/// with the cause), not Foundation's "The operation could not be completed. (… error 1.)".
///
/// ```swift
/// do { _ = try BeaconRegion(identifier: "door", uuidString: "not-a-uuid") }
/// catch { print(error.localizedDescription) }   // "invalidRegion: region 'door': proximity UUID 'not-a-uuid' is not a UUID …"
/// ```
extension RegionKitError: LocalizedError {
    public var errorDescription: String? { description }
}
