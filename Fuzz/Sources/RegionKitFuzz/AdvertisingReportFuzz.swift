import FuzzSupport
import RegionKitBluetooth
import RegionKitCore
import RegionKitHCI

/// LE Advertising Report (0x02, legacy) and LE Extended Advertising Report (0x0D) events through
/// the scanner's pipeline. The first input byte picks the subevent; the rest are its parameters
/// (Num_Reports first), wrapped in a well-formed LE Meta event header so the report parsers
/// themselves are reached. Invariant (the pipeline's documented contract): the allocation-free
/// single-report path and the full decoder give the same observations.
enum AdvertisingReportFuzz {
    static func run(_ data: [UInt8]) {
        guard let selector = data.first else { return }
        let subevent: UInt8 = selector & 1 == 0 ? 0x02 : 0x0D
        let parameters = Array(data.dropFirst().prefix(254))
        let event: [UInt8] = [HCIEvent.leMetaCode, UInt8(parameters.count + 1), subevent] + parameters
        let layout: LEAdvertisingReportLayout = selector & 2 == 0 ? .fieldArrays : .reportByReport
        let time = Timestamp(seconds: 1)

        var fast = BeaconReportPipeline(scannerID: "fuzz", layout: layout)
        var fastObservations: [BeaconObservation] = []
        event.withUnsafeBytes { fast.process(event: $0, at: time) { fastObservations.append($0) } }

        guard let decoded = try? HCIEvent(decoding: event, advertisingReportLayout: layout) else { return }
        var full = BeaconReportPipeline(scannerID: "fuzz", layout: layout)
        var fullObservations: [BeaconObservation] = []
        var sightings: [AdvertisementSighting] = []
        full.process(decoded, at: time, sighting: { sightings.append($0) }) { fullObservations.append($0) }
        guard fastObservations == fullObservations, fast.statistics == full.statistics else {
            FuzzTarget.fail("fast path \(fastObservations) \(fast.statistics) vs decoder \(fullObservations) \(full.statistics) for \(decoded)")
        }
        for sighting in sightings {
            _ = sighting.observation(scannerID: "fuzz")
            _ = sighting.jsonLine(origin: .zero)
        }
    }
}
