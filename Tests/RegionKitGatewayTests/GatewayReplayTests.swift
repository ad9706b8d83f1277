import Foundation
import RegionKitConcurrency
import Testing
import RegionKitTestSupport
import RegionKit
import RegionKitGateway
import RegionKitSimulation

/// Replays of the real gateway recordings (README in shared/fixtures/beacon-runs) through the engine.
@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct GatewayReplayTests {
    static let movers = "DAF246CE836311E4B116123B93F75CBA"

    static func replay(_ name: String, regions: [String], profile: MonitoringProfile) throws -> [LocationEvent] {
        let events = LockedBox<[LocationEvent]>([])
        var chosen = profile
        chosen.nearestScanner = NearestScannerPolicy()
        let session = ReplaySession(profile: chosen, regions: try regions.map { .beacon(try BeaconRegion(specifier: $0)) }) { event in
            events.withLock { $0.append(event) }
        }
        var origin: Int64?
        // Scanners upload in batches: put sightings back in time order first (see ReorderBuffer).
        var buffer = ReorderBuffer<BeaconObservation>(window: 2)
        try GatewayFileReader(path: SharedFixtures.beaconRun(name)).forEach { sighting in
            if origin == nil { origin = sighting.timeMilliseconds }
            let observation = sighting.observation(originMilliseconds: origin!)
            buffer.insert(observation, at: observation.timestamp).forEach(session.feed)
        }
        buffer.drain().forEach(session.feed)
        #expect(buffer.tooLate == 0, "\(buffer.tooLate) sightings later than the 2 s window")
        session.finish(tail: 0)
        return events.withLock { $0 }
    }

    /// A false exit is one the beacon comes back from: the region is entered again later. An exit
    /// after a scanner's last sighting (scanners stop at slightly different times at the end of a
    /// run) is a correct end-of-stream exit.
    static func falseExits(_ events: [LocationEvent]) -> [LocationEvent] {
        events.enumerated().filter { index, event in
            event.typeName == "didExitRegion"
                && events[(index + 1)...].contains { $0.typeName == "didEnterRegion" && $0.regionIdentifier == event.regionIdentifier }
        }.map(\.element)
    }

    @Test("Two scanners: beacons sitting on their scanner never exit their own room", arguments: [MonitoringProfile.coreLocation, .responsive])
    func twoScannersStationary(profile: MonitoringProfile) throws {
        let events = try Self.replay("TwoScannersRun1-2015-03-03.json.gz",
                                     regions: ["b3:\(Self.movers):0:3@Room201", "b4:\(Self.movers):1:4@Room202"], profile: profile)
        #expect(Self.falseExits(events).isEmpty, "\(Self.falseExits(events).map(\.timestamp))")
        #expect(events.filter { $0.typeName == "didStartMonitoring" }.count == 2)
        // Any other exit is at the very end, after the stream stopped (last sighting 1593.9 s).
        #expect(events.filter { $0.typeName == "didExitRegion" }.allSatisfy { $0.timestamp.seconds > 1593.9 })
    }

    @Test("Four scanners: the heartbeat beacon on each scanner never exits its own room", arguments: [MonitoringProfile.coreLocation, .responsive])
    func fourScannersHeartbeats(profile: MonitoringProfile) throws {
        let rooms = [201, 202, 203, 204]
        let regions = rooms.map { "room\($0):DAF246CEF\($0)11E4B116123B93F75CBA:\($0)@Room\($0)" }
        let events = try Self.replay("FourScannersRun1-2015-03-07.json.gz", regions: regions, profile: profile)
        #expect(Self.falseExits(events).isEmpty, "\(Self.falseExits(events).map(\.timestamp))")
        // The scanners stopped between 746.9 s and 751.9 s: exits only after that.
        #expect(events.filter { $0.typeName == "didExitRegion" }.allSatisfy { $0.timestamp.seconds > 746.9 })
    }

    /// The README's timeline (t0 = 11:46:07 PST): 1 and 2 go to 204, 5 and 6 to 202, 7 and 8 to 203;
    /// 1 goes 204 → 202 → 201; 2, 7 return to 201; 5 returns with 1; 6 returns to 201.
    @Test("Four scanners: carried beacons change rooms in the README's order")
    func fourScannersRoomChanges() throws {
        let events = try Self.replay("FourScannersRun1-2015-03-07.json.gz", regions: ["movers:\(Self.movers)"], profile: .responsive)
        var rooms: [UInt16: [String]] = [:]
        for event in events {
            guard case .didChangeNearestScanner(let beacon, let scanner?, _) = event.kind, beacon.uuid.uuidString == "DAF246CE-8363-11E4-B116-123B93F75CBA" else { continue }
            rooms[beacon.minor, default: []].append(String(scanner.suffix(3)))
        }
        func follows(_ minor: UInt16, _ expected: [String]) -> Bool {
            var remaining = expected[...]
            for room in rooms[minor] ?? [] where room == remaining.first { remaining = remaining.dropFirst() }
            return remaining.isEmpty
        }
        #expect(follows(1, ["201", "204", "202", "201"]), "beacon 1: \(rooms[1] ?? [])")
        #expect(follows(2, ["201", "204", "201"]), "beacon 2: \(rooms[2] ?? [])")
        #expect(follows(5, ["201", "202", "201"]), "beacon 5: \(rooms[5] ?? [])")
        #expect(follows(6, ["201", "202", "201"]), "beacon 6: \(rooms[6] ?? [])")
        #expect(follows(7, ["201", "203", "201"]), "beacon 7: \(rooms[7] ?? [])")
        // Beacon 8 is heard only weakly by Room201 after its trip (27 sightings at Room203 in all):
        // the recording supports 201 → 203, not the return.
        #expect(follows(8, ["201", "203"]), "beacon 8: \(rooms[8] ?? [])")
        // Hysteresis: no beacon flaps more than a few times in 12 minutes. (A beacon heard by no
        // scanner for a while leaves its room and is placed again when heard: placed again in the
        // same room, that is not a change of room.)
        let changes = rooms.mapValues { placed in zip(placed, placed.dropFirst()).filter { $0 != $1 }.count + 1 }
        #expect(changes.values.allSatisfy { $0 <= 6 }, "\(rooms)")
    }
}
