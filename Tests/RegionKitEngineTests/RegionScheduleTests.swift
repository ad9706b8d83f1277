import Foundation
import Testing
@testable import RegionKitEngine

/// `RegionSchedule`'s exit-leader cache against a dictionary: whatever sequence of leaders set,
/// forgotten, moved by sightings, regions unregistered, pruned or the whole schedule replaced, each
/// slot answers the leader the model holds, and nothing else. The cache answers without reading
/// its position array while no region holds a leader, so a position left behind by a forgotten
/// leader would show up here as a stale answer once other regions hold leaders again.
@Suite("Region schedule: the exit-leader cache answers what was set, nothing stale")
struct RegionScheduleTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func key(_ minor: Int) -> MonitoredRegion.StreamKey {
        MonitoredRegion.StreamKey(identity: BeaconIdentity(uuid: uuid, major: 1, minor: UInt16(minor)), scannerID: nil)
    }

    @Test("random set, forget, update, unregister, prune and replace against a dictionary", arguments: [UInt64(1), 2, 3, 4])
    func leadersMatchTheModel(seed: UInt64) {
        var rng = SeededRandom(seed: seed)
        var schedule = RegionSchedule()
        let slots = 12
        for slot in 0..<slots { _ = schedule.register(slot: slot) }
        var model: [Int: RegionSchedule.ExitLeader] = [:]
        var clock = 0.0
        for step in 0..<4_000 {
            clock += 0.5
            let slot = Int.random(in: 0..<slots, using: &rng)
            switch Int.random(in: 0..<100, using: &rng) {
            case 0..<35:   // a leader set (new or replacing)
                let leader = RegionSchedule.ExitLeader(time: Timestamp(seconds: clock + Double.random(in: 1...30, using: &rng)),
                                                       key: Self.key(Int.random(in: 0..<20, using: &rng)), lastSighting: Timestamp(seconds: clock))
                schedule.setExitLeader(leader, slot: slot)
                model[slot] = leader
            case 35..<65:  // forgotten (often while it is the only one)
                schedule.setExitLeader(nil, slot: slot)
                model[slot] = nil
            case 65..<85:  // a sighting of the leader's own stream or another one
                let held = model[slot]
                let key = held != nil && Bool.random(using: &rng) ? held!.key : Self.key(Int.random(in: 0..<20, using: &rng))
                let own = held?.key == key   // a random key may be the leader's own
                let deadline = Timestamp(seconds: clock + Double.random(in: 1...30, using: &rng))
                let time = Timestamp(seconds: clock)
                let answered = schedule.updateExitLeader(slot: slot, identity: key.identity, scannerID: nil, deadline: deadline, at: time)
                #expect(answered == (held != nil), "step \(step): slot \(slot) answered \(answered), model \(held != nil)")
                if let held {
                    if own {
                        model[slot] = deadline >= held.time ? RegionSchedule.ExitLeader(time: deadline, key: key, lastSighting: time) : nil
                    } else if deadline > held.time || (deadline == held.time && (time > held.lastSighting || (time == held.lastSighting && key < held.key))) {
                        model[slot] = RegionSchedule.ExitLeader(time: deadline, key: key, lastSighting: time)
                    }
                }
            case 85..<92:  // the region stopped, then registered again in the same slot
                schedule.unregister(slot: slot)
                _ = schedule.register(slot: slot)
                model[slot] = nil
            case 92..<99:  // pruned
                schedule.pruned(slot: slot, remaining: Int.random(in: 0..<10, using: &rng))
                model[slot] = nil
            default:       // a profile change: every timer and cache replaced
                schedule.replaceAll(with: [:])
                model = [:]
            }
            for other in 0..<slots {
                let got = schedule.exitLeader(slot: other)
                let want = model[other]
                #expect(got?.key == want?.key && got?.time == want?.time && got?.lastSighting == want?.lastSighting,
                        "step \(step): slot \(other) holds \(String(describing: got)), model \(String(describing: want))")
            }
        }
    }
}
