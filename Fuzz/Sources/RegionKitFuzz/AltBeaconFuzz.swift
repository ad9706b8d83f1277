import FuzzSupport
import RegionKitCore

/// AltBeacon advertising data (`AltBeaconFrame.decode`). Invariants: a decoded frame's own
/// advertising data decodes back to it; the scanner's allocation-free path (`BeaconFrame.nonIBeacon`)
/// finds the same AltBeacon whenever it reports one and finds a beacon whenever the decoder does;
/// the built-in AltBeacon layout (Android Beacon Library syntax) reads the same id1/id2/id3,
/// reference RSSI and reserved byte from the same structure, and accepts no other frame the codec
/// refuses except a longer structure (the library ignores the tail); the umbrella decoder agrees.
enum AltBeaconFuzz {
    static func run(_ data: [UInt8]) {
        let fast = data.withUnsafeBytes { BeaconFrame.nonIBeacon(in: $0) }
        let layout = Result { () throws(BeaconDecodingError) in try BeaconLayout.altBeacon.decode(data) }
        switch Result(catching: { () throws(BeaconDecodingError) in try AltBeaconFrame.decode(data) }) {
        case .success(let frame):
            guard frame.identity.format == .altBeacon else { FuzzTarget.fail("\(frame) decoded with format \(frame.identity.format)") }
            let again = Result { () throws(BeaconDecodingError) in try AltBeaconFrame.decode(frame.advertisingData()) }
            guard case .success(let back) = again, back == frame else {
                FuzzTarget.fail("\(frame) does not survive advertisingData()/decode: \(again)")
            }
            guard fast != nil else { FuzzTarget.fail("decode found \(frame) but BeaconFrame.nonIBeacon found nothing") }
            // The layout takes the first structure with the matcher and at least 26 bytes: when that
            // is a longer one before the codec's, the two read different structures.
            guard case .success(let decoded) = layout else { FuzzTarget.fail("the AltBeacon layout refused what the codec read as \(frame): \(layout)") }
            if structureLength(data, at: decoded.offset) == AltBeaconFrame.manufacturerDataLength {
                guard BeaconLayout.altBeacon.identity(of: decoded) == frame.identity,
                      decoded.measuredPower == Int(frame.referenceRSSI), decoded.dataFields == [UInt64(frame.reserved)] else {
                    FuzzTarget.fail("the AltBeacon layout read \(decoded) where the codec read \(frame)")
                }
            }
            switch Result(catching: { () throws(BeaconDecodingError) in try BeaconFrame.decode(data) }) {
            case .success: break
            case .failure(let error): FuzzTarget.fail("BeaconFrame.decode threw \(error) on an AltBeacon \(frame)")
            }
        case .failure(let error):
            guard error.offset >= 0, error.offset <= data.count else { FuzzTarget.fail("error offset \(error.offset) outside \(data.count) bytes: \(error)") }
            if case .beacon(let identity, _)? = fast, identity.format == .altBeacon {
                FuzzTarget.fail("decode threw \(error) but BeaconFrame.nonIBeacon found \(identity)")
            }
            if case .success(let decoded) = layout {
                let length = structureLength(data, at: decoded.offset)
                guard length > AltBeaconFrame.manufacturerDataLength else {
                    FuzzTarget.fail("the AltBeacon layout accepted a \(length)-byte structure the codec refused: \(error)")
                }
            }
        }
        if case .beacon(let identity, let power)? = fast, identity.format == .altBeacon {
            // The fast path stops at the first AltBeacon or Eddystone structure; so does decode for AltBeacon.
            guard case .success(let frame) = Result(catching: { () throws(BeaconDecodingError) in try AltBeaconFrame.decode(data) }),
                  frame.identity == identity, Int(frame.referenceRSSI) == power else {
                FuzzTarget.fail("BeaconFrame.nonIBeacon found \(identity) \(power) dBm, the decoder disagrees")
            }
        }
    }

    /// The data length (after the AD type) of the structure whose length byte is at `offset`; -1 outside the data.
    static func structureLength(_ data: [UInt8], at offset: Int) -> Int {
        data.indices.contains(offset) ? Int(data[offset]) - 1 : -1
    }
}
