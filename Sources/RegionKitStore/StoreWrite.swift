import Foundation
import RegionKitCore
import RegionKitEngine

/// One write to a ``RegionStoring``, as a value: what ``RegionStoring/apply(_:)`` commits, many
/// in one transaction (the daemon's writer batches a backlog this way: one commit for hundreds of
/// events instead of one each).
///
/// ```swift
/// let stored = try await store.apply([
///     .state("lobby", .inside, since: 12.5, evidence: nil, at: 12.5),
///     .event(time: 12.5, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil,
///            json: line, hooks: ["webhook:http://127.0.0.1:8080/"]),
/// ])   // [StoredEvent] for the one event, with its id
/// ```
public enum StoreWrite: Sendable {
    /// ``RegionStoring/saveRegion(_:at:origin:)``: `origin` nil keeps a stored region's origin.
    case region(Region, at: Double, origin: RegionOrigin?)
    /// ``RegionStoring/removeRegion(_:)``.
    case removeRegion(String)
    /// ``RegionStoring/saveState(_:state:since:evidence:at:)``.
    case state(String, RegionState, since: Double?, evidence: EventEvidence?, at: Double)
    /// ``RegionStoring/append(time:type:region:state:reason:json:hooks:)``: an event and its hook deliveries.
    case event(time: Double, type: String, region: String?, state: String?, reason: String?, json: String, hooks: [String])
    /// A beacon's room (``RegionStoring/beaconRooms()``): `beacon` is its `BeaconIdentity`'s
    /// `description`; `scanner` the room it is placed in from `at` on, or nil when it is placed
    /// nowhere any more (its row is removed, so the table holds only the beacons placed now).
    case room(String, scanner: String?, at: Double)

    /// The write in an error message: what it does and the region it is about,
    /// e.g. `didEnterRegion of region 'lobby'`, `saveState of region 'lobby'`, `processStopped`.
    public var summary: String {
        let region: String? = switch self {
        case .region(let region, _, _): region.identifier
        case .removeRegion(let identifier), .state(let identifier, _, _, _, _): identifier
        case .event(_, _, let region, _, _, _, _): region
        case .room: nil
        }
        return region.map { "\(typeName) of region '\($0)'" } ?? typeName
    }

    /// What the write does, for logs: the store method, or an event's type.
    public var typeName: String {
        switch self {
        case .region: "saveRegion"
        case .removeRegion: "removeRegion"
        case .state: "saveState"
        case .event(_, let type, _, _, _, _, _): type
        case .room: "saveRoom"
        }
    }

    /// The JSON this write stores beside its columns: a region's definition, a state's evidence
    /// (nil for the others). Encoded before a store opens its transaction: a value that cannot be
    /// encoded fails the batch before it starts.
    public func jsonColumn() throws -> String? {
        switch self {
        case .region(let region, _, _): try Self.json(region)
        case .state(_, _, _, let evidence, _): try evidence.map(Self.json)
        case .removeRegion, .event, .room: nil
        }
    }

    /// JSON as the stores keep it: keys sorted, so equal values are equal text.
    public static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
