import Foundation
import Testing
import RegionKitTestSupport
import RegionKit
import RegionKitGateway
import RegionKitSimulation
import RegionKitEvaluation

/// `regionkit eval replay`'s measures on the real gateway recordings (shared/fixtures/beacon-runs):
/// the structure and sanity of the result, not the figures (those come from a release build).
@Suite(.enabled(if: SharedFixtures.available, SharedFixtures.skipMessage))
struct ReplayEvaluationFixtureTests {
    static func evaluate(_ name: String, _ profile: MonitoringProfile) throws -> (GatewayRecording, ReplayEvaluation) {
        let recording = try GatewayRecording(path: SharedFixtures.beaconRun(name))
        let truth = try GroundTruthCatalog.beaconRuns().truth(forRecording: recording.fileName)
        #expect(truth != nil, "\(name) is described by the README")
        let result = try ReplayEvaluator(profile: profile).evaluate(recording: recording.fileName, observations: recording.observations,
                                                                    originMilliseconds: recording.originMilliseconds, groundTruth: truth)
        return (recording, result)
    }

    @Test("Four scanners: stationary hours, ≈10 Hz and ≈1 Hz streams, every stream end measured, rooms scored",
          arguments: [MonitoringProfile.coreLocation, .responsive])
    func fourScanners(profile: MonitoringProfile) throws {
        let (recording, result) = try Self.evaluate("FourScannersRun1-2015-03-07.json.gz", profile)
        #expect(result.sightings == 38_942 && recording.sightings.count == 38_942)
        #expect(abs(result.duration - 751.888) < 0.001)
        // Uploads arrive out of order by up to 1.84 s (ReorderBuffer's doc).
        #expect(recording.maximumLateness > 1 && recording.maximumLateness < 2)
        #expect(result.notes.allSatisfy { !$0.contains("could not be monitored") }, "no region limit: \(result.notes)")

        // 21 beacon × scanner streams; the four heartbeat beacons report at ≈10 Hz, others at ≈1 Hz.
        #expect(result.streams.count == 21)
        let classes = Set(result.streams.map(\.rateClass))
        #expect(classes.contains(.tenHertz) && classes.contains(.oneHertz))
        for stream in result.streams where stream.key.identity.major >= 201 {
            #expect(stream.rateClass == .tenHertz && stream.rate > 7 && stream.rate < 10.5, "\(stream)")
        }

        let falseExits = try #require(result.falseExits)
        #expect(falseExits.streams == 4)
        #expect(falseExits.beaconHours > 0.8 && falseExits.beaconHours < 0.85)
        // Holds for both profiles as of this commit.
        #expect(falseExits.count == 0, "\(falseExits.events)")

        // Every stream has at least its final end; each end is either measured or counted as missed.
        #expect(result.ends.count >= result.streams.count)
        for end in result.ends {
            if let latency = end.latency { #expect(latency > 0, "\(end)") }
        }
        let measured = StreamRateClass.allCases.map { result.latency($0) }
        #expect(measured.map(\.ends).reduce(0, +) == result.ends.count)
        #expect(result.latency(.tenHertz).ends >= 4)

        // Room assignment: 6 carried beacons scored against the timeline, 4 stationary ones.
        let carried = try #require(result.carriedRooms)
        #expect(carried.beacons.count == 6)
        #expect(carried.total.scored > 2_500 && carried.total.scored < 4_500)
        #expect((carried.total.fraction ?? 0) > 0.9, "nearest-scanner decisions mostly follow the README: \(carried.total)")
        #expect(result.stationaryRooms?.beacons.count == 4)
        // The carried beacons' stays (transitions and tolerance removed): 18 room periods, of which the
        // 15 s and 23 s ones vanish inside the tolerance.
        let stays = try #require(result.stayExits)
        #expect(stays.streams == 14)
        #expect(stays.beaconHours > 0.5 && stays.beaconHours < 1)
        #expect(stays.events.allSatisfy { $0.key.identity.major < 201 })
    }

    @Test("Core Location's exits on the real recordings come 30–40 s after the last sighting (spec §2)")
    func coreLocationLatency() throws {
        for name in ["TwoScannersRun1-2015-03-03.json.gz", "FourScannersRun1-2015-03-07.json.gz", "FourScannersBeacon5Run1-2015-03-13.json.gz"] {
            let (_, result) = try Self.evaluate(name, .coreLocation)
            #expect(!result.ends.isEmpty)
            for end in result.ends {
                let latency = try #require(end.latency, "\(name): \(end) has no exit")
                #expect(latency >= 30 - 1e-6 && latency <= 40 + 1e-6, "\(name): \(end)")
            }
        }
    }

    @Test("Two scanners: three stationary beacons, Core Location without false exits; one scanner-stop end per stream",
          arguments: [MonitoringProfile.coreLocation, .responsive])
    func twoScanners(profile: MonitoringProfile) throws {
        let (_, result) = try Self.evaluate("TwoScannersRun1-2015-03-03.json.gz", profile)
        #expect(result.streams.count == 7)
        let falseExits = try #require(result.falseExits)
        #expect(falseExits.streams == 3)
        #expect(falseExits.beaconHours > 1.3 && falseExits.beaconHours < 1.35)
        if profile.name == "corelocation" {
            // (responsive has one false exit at 73 s on beacon 2, as of this commit: reported, not asserted.)
            #expect(falseExits.count == 0, "\(falseExits.events)")
        }
        #expect(result.carriedRooms == nil, "the README gives no times for beacon 1")
        #expect((result.stationaryRooms?.total.scored ?? 0) > 4_000)
        // The two scanners stopped within 2 s of each other: the ≈10 Hz streams end with the recording.
        #expect(result.ends.filter { $0.rateClass == .tenHertz }.allSatisfy { $0.endOfRecording })
    }

    @Test("Beacon 5 walk: no stationary beacon and no times, so only latency and flaps are measured")
    func beacon5() throws {
        let (_, result) = try Self.evaluate("FourScannersBeacon5Run1-2015-03-13.json.gz", .responsive)
        #expect(result.streams.count == 4)
        #expect(result.falseExits == nil && result.stayExits == nil && result.carriedRooms == nil && result.stationaryRooms == nil)
        #expect(!result.notes.isEmpty)
        #expect(!result.ends.isEmpty)
    }
}
