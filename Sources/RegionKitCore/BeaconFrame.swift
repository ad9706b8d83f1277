/// Any beacon frame RegionKit reads or sends: iBeacon, AltBeacon or Eddystone (UID, URL, TLM).
///
/// ```swift
/// let frame = try BeaconFrame.decode(advertisingData)
/// frame.identity       // the beacon's identity (nil for Eddystone URL and TLM)
/// frame.measuredPower  // expected RSSI at 1 m
/// ```
public enum BeaconFrame: Hashable, Sendable {
    case iBeacon(IBeaconFrame)
    case altBeacon(AltBeaconFrame)
    case eddystone(EddystoneFrame)

    /// What the scanner's fast path found in a frame that is not an iBeacon.
    public enum Sighted: Hashable, Sendable {
        /// An AltBeacon or Eddystone-UID identity and its expected RSSI at 1 m.
        case beacon(BeaconIdentity, measuredPower: Int)
        /// An unencrypted Eddystone-TLM frame.
        case telemetry(EddystoneTelemetry)
    }

    /// The identity a region can match: nil for Eddystone URL and TLM frames.
    public var identity: BeaconIdentity? {
        switch self {
        case .iBeacon(let frame): frame.identity
        case .altBeacon(let frame): frame.identity
        case .eddystone(.uid(let frame)): frame.identity
        case .eddystone: nil
        }
    }

    /// Expected RSSI at 1 m (Eddystone: TX power at 0 m − 41 dB); nil for TLM.
    public var measuredPower: Int? {
        switch self {
        case .iBeacon(let frame): Int(frame.measuredPower)
        case .altBeacon(let frame): Int(frame.referenceRSSI)
        case .eddystone(.uid(let frame)): frame.measuredPower
        case .eddystone(.url(let frame)): frame.measuredPower
        case .eddystone(.tlm): nil
        }
    }

    /// The format's name: `ibeacon`, `altbeacon`, `eddystone-uid`, `eddystone-url`, `eddystone-tlm`.
    public var formatName: String {
        switch self {
        case .iBeacon: "ibeacon"
        case .altBeacon: "altbeacon"
        case .eddystone(.uid): "eddystone-uid"
        case .eddystone(.url): "eddystone-url"
        case .eddystone(.tlm): "eddystone-tlm"
        }
    }

    /// The legacy advertising data for this frame.
    public func advertisingData() -> [UInt8] {
        switch self {
        case .iBeacon(let frame): frame.advertisingData()
        case .altBeacon(let frame): frame.advertisingData()
        case .eddystone(let frame): frame.advertisingData()
        }
    }

    /// The scan response (an iBeacon's local name; empty otherwise).
    public func scanResponseData() -> [UInt8] {
        if case .iBeacon(let frame) = self { return frame.scanResponseData() }
        return []
    }

    /// Decodes the first beacon frame of any supported format. When none is found, the error is
    /// the most specific near-miss (a frame of the right kind that is wrong inside), else a
    /// truncated structure, else `noBeaconData`.
    public static func decode(_ data: some Collection<UInt8>) throws(BeaconDecodingError) -> BeaconFrame {
        let bytes = Array(data)
        var errors: [BeaconDecodingError] = []
        do { return .iBeacon(try IBeaconFrame.decode(bytes)) } catch { errors.append(error) }
        do { return .altBeacon(try AltBeaconFrame.decode(bytes)) } catch { errors.append(error) }
        do { return .eddystone(try EddystoneFrame.decode(bytes)) } catch { errors.append(error) }
        let vague: Set<BeaconDecodingError.Code> = [.noBeaconData, .wrongCompany, .wrongBeaconCode, .wrongServiceUUID, .truncatedStructure]
        if let specific = errors.first(where: { !vague.contains($0.code) }) { throw specific }
        if let truncated = errors.first(where: { $0.code == .truncatedStructure }) { throw truncated }
        throw BeaconDecodingError(.noBeaconData, at: bytes.count, "no iBeacon, AltBeacon or Eddystone frame in \(bytes.count) bytes")
    }

    /// AltBeacon, Eddystone-UID or Eddystone-TLM in `data` with ``decode(_:)``'s checks, without
    /// building errors: the scanner's path for reports that are not iBeacons.
    public static func nonIBeacon(in data: UnsafeRawBufferPointer) -> Sighted? {
        var found: Sighted?
        _ = AdvertisingDataWalker.walk(data) { s in
            if s.type == IBeaconFrame.adTypeManufacturerSpecific, s.count == AltBeaconFrame.manufacturerDataLength,
               data[s.body + 2] == 0xBE, data[s.body + 3] == 0xAC {
                let frame = AltBeaconFrame.frame(data, body: s.body)
                found = .beacon(frame.identity, measuredPower: Int(frame.referenceRSSI))
                return false
            }
            if s.type == EddystoneFrame.adTypeServiceData, s.count >= 3, data[s.body] == 0xAA, data[s.body + 1] == 0xFE,
               data[s.body + 2] != EddystoneFrame.typeURL, case .success(let frame) = EddystoneFrame.check(data, s) {
                switch frame {
                case .uid(let uid): found = .beacon(uid.identity, measuredPower: uid.measuredPower)
                case .tlm(let tlm): found = .telemetry(tlm)
                case .url: return true
                }
                return false
            }
            return true
        }
        return found
    }
}
