import Foundation
import Testing
@testable import RegionKitSimulation
import RegionKit
import RegionKitTestSupport

@Suite("Paced replay: jumps in the recording's time are bounded in real time")
struct ReplaySessionTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func observation(at seconds: Double) -> BeaconObservation {
        BeaconObservation(identity: BeaconIdentity(uuid: uuid, major: 1, minor: 1), rssi: -60, measuredPower: -59,
                          timestamp: Timestamp(seconds: seconds))
    }

    @Test("A far-future timestamp is waited for at most maximumGap / pace, while virtual time takes the whole jump",
          .timeLimit(.inProcess))
    func farFutureJump() async throws {
        let region = try BeaconRegion(identifier: "b", uuidString: Self.uuid.uuidString)
        let session = ReplaySession(profile: .responsive, regions: [.beacon(region)], maximumGap: 0.01) { _ in }
        await session.feed(Self.observation(at: 0), pace: 1)
        // 31,700 years ahead: before the bound, paced replay slept (or trapped converting the sleep).
        await session.feed(Self.observation(at: 1e12), pace: 1)
        await session.feed(Self.observation(at: 1e12 + 0.005), pace: 1)
        #expect(session.clock.now == Timestamp(seconds: 1e12 + 0.005))
        let gaps = session.shortenedGaps
        #expect(gaps.count == 1 && gaps.longest == 1e12)
    }

    @Test("Saturating conversions: durations and integers from untrusted Doubles never trap")
    func saturating() {
        #expect(Duration.seconds(saturating: .infinity) == .seconds(1_000_000_000))
        #expect(Duration.seconds(saturating: .nan) == .zero)
        #expect(Duration.seconds(saturating: -5) == .zero)
        #expect(Duration.seconds(saturating: 1.5) == .milliseconds(1500))
        #expect(Int(saturating: 1e300) == .max && Int(saturating: -1e300) == .min && Int(saturating: .nan) == 0)
        #expect(Int16(saturating: -40.6) == -41 && UInt8(saturating: -3) == 0 && UInt8(saturating: 300) == 255)
    }
}
