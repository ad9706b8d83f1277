import FuzzSupport
import RegionKitCore

/// iBeacon advertising data. Invariants: the allocation-free fast path agrees with the full
/// decoder, and a decoded frame's own advertising data decodes back to it.
enum IBeaconFuzz {
    static func run(_ data: [UInt8]) {
        let fast = data.withUnsafeBytes { IBeaconFrame.identity(in: $0) }
        switch Result(catching: { () throws(BeaconDecodingError) in try IBeaconFrame.decode(data) }) {
        case .success(let frame):
            guard let fast, fast.identity == frame.identity, fast.measuredPower == frame.measuredPower else {
                FuzzTarget.fail("decode found \(frame) but the fast path found \(String(describing: fast))")
            }
            let again = try? IBeaconFrame.decode(frame.advertisingData())
            guard again?.identity == frame.identity, again?.measuredPower == frame.measuredPower else {
                FuzzTarget.fail("\(frame) does not survive advertisingData()/decode")
            }
        case .failure(let error):
            guard fast == nil else { FuzzTarget.fail("decode threw \(error) but the fast path found \(String(describing: fast))") }
        }
    }
}
