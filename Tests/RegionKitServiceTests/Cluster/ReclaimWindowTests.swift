import Testing
@testable import RegionKitService

/// The reclaim window of a cluster member's lease rounds, in virtual time (instants built from
/// one origin; nothing sleeps).
@Suite("Cluster: reclaiming only one's own partitions after being away")
struct ReclaimWindowTests {
    /// Drives a window: `round(at:)` begins a round and says whether it only reclaims.
    struct Rounds {
        let t0 = ContinuousClock.now
        var window = ReclaimWindow(length: .seconds(6))
        mutating func round(at second: Double) -> Bool { window.begin(at: t0 + .seconds(second)) }
        mutating func succeeded(reclaimed: Bool, at second: Double) { window.succeeded(reclaimed: reclaimed, at: t0 + .seconds(second)) }
    }

    @Test("ordinary rounds never reclaim only")
    func ordinary() {
        var rounds = Rounds()
        for second in 0..<10 {
            let reclaimOnly = rounds.round(at: Double(second))
            #expect(!reclaimOnly, "at \(second) s")
            rounds.succeeded(reclaimed: false, at: Double(second) + 0.1)
        }
    }

    @Test("after failed rounds, the window runs two lease times from the first round back, even when that round waited out the outage")
    func windowFromTheRoundBack() {
        var rounds = Rounds()
        var reclaimOnly = rounds.round(at: 0)
        #expect(!reclaimOnly)
        rounds.window.failed()
        // The next round starts at 1 s and waits for a connection until the store is back at 9 s.
        reclaimOnly = rounds.round(at: 1)
        #expect(reclaimOnly, "the round after a failure only reclaims")
        rounds.succeeded(reclaimed: true, at: 9)
        // Counted from 1 s the window would be over at 7 s: the round at 10 s would take others'
        // partitions while they are still coming back. Counted from 9 s it lasts until 15 s.
        for second in [10.0, 12, 14.9] {
            reclaimOnly = rounds.round(at: second)
            #expect(reclaimOnly, "reclaim only at \(second) s")
            rounds.succeeded(reclaimed: true, at: second + 0.05)
        }
        reclaimOnly = rounds.round(at: 15.1)
        #expect(!reclaimOnly, "the window is over at 15 s")
        rounds.succeeded(reclaimed: false, at: 15.2)
        reclaimOnly = rounds.round(at: 16)
        #expect(!reclaimOnly)
    }

    @Test("a round in the window does not extend it; a failure in the window restarts it once back")
    func roundsInTheWindow() {
        var rounds = Rounds()
        rounds.window.failed()
        var reclaimOnly = rounds.round(at: 0)
        #expect(reclaimOnly)
        rounds.succeeded(reclaimed: true, at: 0.5)
        reclaimOnly = rounds.round(at: 3)
        #expect(reclaimOnly)
        rounds.succeeded(reclaimed: true, at: 3.1)
        reclaimOnly = rounds.round(at: 6.4)
        #expect(reclaimOnly, "open until 6.5 s")
        rounds.window.failed()
        reclaimOnly = rounds.round(at: 7)
        #expect(reclaimOnly, "after a failure the next round reclaims though the window closed")
        rounds.succeeded(reclaimed: true, at: 8)
        reclaimOnly = rounds.round(at: 13.9)
        #expect(reclaimOnly, "a new window from 8 s")
        rounds.succeeded(reclaimed: true, at: 13.95)
        reclaimOnly = rounds.round(at: 14.1)
        #expect(!reclaimOnly)
    }

    @Test("the store finding the member away (its heartbeat expired during a round that never failed) opens the window")
    func awayWithoutFailure() {
        var rounds = Rounds()
        var reclaimOnly = rounds.round(at: 0)
        #expect(!reclaimOnly)
        // The round waited 8 s; the store found the heartbeat expired and only reclaimed.
        rounds.succeeded(reclaimed: true, at: 8)
        reclaimOnly = rounds.round(at: 9)
        #expect(reclaimOnly)
        rounds.succeeded(reclaimed: true, at: 9.1)
        reclaimOnly = rounds.round(at: 13.9)
        #expect(reclaimOnly)
        rounds.succeeded(reclaimed: true, at: 14)
        reclaimOnly = rounds.round(at: 14.1)
        #expect(!reclaimOnly)
    }
}
