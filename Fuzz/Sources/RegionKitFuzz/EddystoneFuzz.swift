import FuzzSupport
import RegionKitCore

/// Eddystone UID, URL and TLM (`EddystoneFrame.decode`, `BeaconFrame.decode`). The first byte picks
/// the input's shape: even, the rest is whole advertising data; odd, the rest is an Eddystone frame
/// (the bytes after the 0xFEAA service UUID: UID, URL, TLM service data) wrapped in Flags, the
/// 16-bit service UUID list and a Service Data AD structure as a transmitter sends it.
///
/// Invariants: a decoded frame's own advertising data decodes back to it, and for the wrapped shape
/// its frame bytes are the input (an 18-byte UID gains its two RFU zeros); a URL's expanded text
/// encodes again (`EddystoneURLFrame(url:)`) to a frame with the same text; the scanner's
/// allocation-free path (`BeaconFrame.nonIBeacon`) reports the same UID or TLM; the built-in
/// Eddystone layouts read the same fields from the structure the codec decoded, and every structure
/// a layout accepts that the codec also accepts reads the same; the umbrella decoder agrees.
enum EddystoneFuzz {
    static func run(_ input: [UInt8]) {
        guard let shape = input.first else { return }
        let rest = Array(input.dropFirst())
        let wrapped = shape & 1 == 1
        let data = wrapped ? wrap(Array(rest.prefix(252))) : rest
        let fast = data.withUnsafeBytes { BeaconFrame.nonIBeacon(in: $0) }
        switch Result(catching: { () throws(BeaconDecodingError) in try EddystoneFrame.decode(data) }) {
        case .success(let frame):
            let again = Result { () throws(BeaconDecodingError) in try EddystoneFrame.decode(frame.advertisingData()) }
            guard case .success(let back) = again, back == frame else {
                FuzzTarget.fail("\(frame) does not survive advertisingData()/decode: \(again)")
            }
            if wrapped {
                let sent = Array(rest.prefix(252))
                let bytes = frame.frameBytes
                guard bytes == sent || (bytes.count == 20 && sent.count == 18 && Array(bytes.prefix(18)) == sent) else {
                    FuzzTarget.fail("\(frame) has frame bytes \(bytes), the input was \(sent)")
                }
            }
            checkFrame(frame)
            checkFastPath(frame, fast)
            switch Result(catching: { () throws(BeaconDecodingError) in try BeaconFrame.decode(data) }) {
            case .success(let any):
                // iBeacon and AltBeacon come first in the umbrella decoder.
                if case .eddystone(let found) = any, found != frame { FuzzTarget.fail("BeaconFrame.decode found \(found), EddystoneFrame.decode \(frame)") }
            case .failure(let error): FuzzTarget.fail("BeaconFrame.decode threw \(error) on \(frame)")
            }
        case .failure(let error):
            guard error.offset >= 0, error.offset <= data.count else { FuzzTarget.fail("error offset \(error.offset) outside \(data.count) bytes: \(error)") }
            switch fast {
            case .telemetry(let tlm)?: FuzzTarget.fail("decode threw \(error) but the fast path found \(tlm)")
            case .beacon(let identity, _)? where identity.format == .eddystoneUID:
                FuzzTarget.fail("decode threw \(error) but the fast path found \(identity)")
            default: break
            }
        }
        checkLayouts(data)
    }

    /// Flags, Complete List of 16-bit Service UUIDs (0xFEAA), Service Data - 16-bit UUID 0xFEAA + `frame`.
    static func wrap(_ frame: [UInt8]) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, UInt8(frame.count + 3), 0x16, 0xAA, 0xFE] + frame
    }

    static func checkFrame(_ frame: EddystoneFrame) {
        switch frame {
        case .uid(let uid):
            guard uid.identity.format == .eddystoneUID, uid.identity.major == 0, uid.identity.minor == 0 else { FuzzTarget.fail("UID identity \(uid.identity)") }
        case .url(let url):
            let text = url.url
            switch Result(catching: { () throws(RegionKitError) in try EddystoneURLFrame(url: text, txPower: url.txPower) }) {
            case .success(let encoded):
                guard encoded.url == text, encoded.encodedURL.count <= url.encodedURL.count else {
                    FuzzTarget.fail("URL '\(text)' from \(url.encodedURL) encodes again to \(encoded.encodedURL) ('\(encoded.url)')")
                }
            case .failure(let error): FuzzTarget.fail("URL '\(text)' decoded from \(url.encodedURL) cannot be encoded again: \(error)")
            }
        case .tlm(let tlm):
            guard tlm.version == 0, tlm.batteryMillivolts != 0, tlm.temperature.map(\.isFinite) ?? true, tlm.advertisingCount != nil, tlm.uptimeDeciseconds != nil else {
                FuzzTarget.fail("TLM fields \(tlm)")
            }
        }
    }

    /// The fast path stops at the first AltBeacon, UID or TLM structure; decode at the first UID, URL or TLM.
    static func checkFastPath(_ frame: EddystoneFrame, _ fast: BeaconFrame.Sighted?) {
        if case .url = frame { return }
        guard let fast else { FuzzTarget.fail("decode found \(frame) but BeaconFrame.nonIBeacon found nothing") }
        switch (frame, fast) {
        case (_, .beacon(let identity, _)) where identity.format == .altBeacon:
            return   // an AltBeacon structure before the Eddystone one
        case (.uid(let uid), .beacon(let identity, let power)):
            guard uid.identity == identity, uid.measuredPower == power else { FuzzTarget.fail("decode found \(uid), the fast path \(identity) \(power) dBm") }
        case (.tlm(let tlm), .telemetry(let seen)):
            guard tlm == seen else { FuzzTarget.fail("decode found \(tlm), the fast path \(seen)") }
        default:
            FuzzTarget.fail("decode found \(frame) but the fast path \(fast)")
        }
    }

    /// Per structure: where the codec and a built-in layout both accept it, they read the same;
    /// where the codec accepts it, the layout of its kind does too.
    static func checkLayouts(_ data: [UInt8]) {
        for (_, structure) in AdvertisingStructures.split(data) {
            let codec = try? EddystoneFrame.decode(structure)
            let uid = try? BeaconLayout.eddystoneUID.decode(structure)
            let url = try? BeaconLayout.eddystoneURL.decode(structure)
            let tlm = try? BeaconLayout.eddystoneTLM.decode(structure)
            switch codec {
            case .uid(let frame)?:
                guard let uid, BeaconLayout.eddystoneUID.identity(of: uid) == frame.identity, uid.measuredPower == frame.measuredPower else {
                    FuzzTarget.fail("UID layout read \(String(describing: uid)) where the codec read \(frame) in \(structure)")
                }
            case .url(let frame)?:
                guard let url, url.identifiers == [frame.encodedURL], url.measuredPower == frame.measuredPower else {
                    FuzzTarget.fail("URL layout read \(String(describing: url)) where the codec read \(frame) in \(structure)")
                }
            case .tlm(let frame)?:
                let expected: [UInt64] = [0, UInt64(frame.batteryMillivolts ?? 0), UInt64(UInt16(bitPattern: frame.temperatureRaw)),
                                          UInt64(frame.advertisingCount ?? 0), UInt64(frame.uptimeDeciseconds ?? 0)]
                guard let tlm, tlm.dataFields == expected else {
                    FuzzTarget.fail("TLM layout read \(String(describing: tlm)) where the codec read \(frame) in \(structure)")
                }
            case nil:
                break
            }
        }
    }
}
