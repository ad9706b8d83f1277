import RegionKitCore
import RegionKitHCI

/// Turns HCI LE advertising report events into beacon observations: the scanner's per-event work
/// (statistics, scan-response de-duplication, beacon decoding), as a plain value.
///
/// iBeacon is tried first (its path is unchanged); a report that is not one is tried as AltBeacon,
/// Eddystone-UID and Eddystone-TLM, then against the configured ``layouts``. A TLM frame is kept
/// per transmitter address (at most ``telemetryCapacity`` addresses) and attached to the next
/// beacon observations from that address, until no TLM has come from that address for
/// ``telemetryMaximumAge`` (10 minutes by default): a beacon whose TLM stopped (reconfigured,
/// battery swapped for a USB supply, address reused) does not keep stale battery and temperature.
///
/// ```swift
/// var pipeline = BeaconReportPipeline(scannerID: "hall")
/// pipeline.process(event: eventBytes, at: now) { observation in manager.ingest(observation) }
/// ```
public struct BeaconReportPipeline: Sendable {
    public var scannerID: String?
    public var deduplicator: ScanResponseDeduplicator
    public var statistics = ScanStatistics()
    /// How legacy reports with several reports per event are laid out (see `LEAdvertisingReportLayout`).
    public var layout: LEAdvertisingReportLayout
    /// Custom beacon layouts (Android Beacon Library syntax) tried after the built-in formats;
    /// only those with a `BeaconLayout.format` produce observations.
    public var layouts: [BeaconLayout] = []
    /// A TLM frame and when it was heard.
    public struct KeptTelemetry: Hashable, Sendable {
        public var frame: EddystoneTelemetry
        public var heardAt: Timestamp
    }

    /// The latest Eddystone-TLM per transmitter address (address bits | address type << 48).
    public private(set) var telemetry: [UInt64: KeptTelemetry] = [:]
    /// Seconds after the last TLM from an address that its telemetry is no longer attached (and is
    /// dropped): 600 s by default. TLM is typically interleaved every few seconds to a minute
    /// (eddystone-tlm/tlm-plain.md "Interleaving Telemetry" allows much lower rates; raise this
    /// for beacons that send TLM less than every 10 minutes).
    public var telemetryMaximumAge: Double = BeaconReportPipeline.defaultTelemetryMaximumAge
    public static let defaultTelemetryMaximumAge: Double = 600
    /// Addresses whose telemetry is kept; the map is emptied when a new address would exceed it
    /// (a flood of random addresses cannot grow it without bound).
    public static let telemetryCapacity = 4096

    public init(scannerID: String?, deduplicator: ScanResponseDeduplicator = ScanResponseDeduplicator(),
                layout: LEAdvertisingReportLayout = .fieldArrays, layouts: [BeaconLayout] = []) {
        self.scannerID = scannerID
        self.deduplicator = deduplicator
        self.layout = layout
        self.layouts = layouts
    }

    /// Keeps `frame` as the telemetry of `address`, heard at `time`.
    mutating func store(_ frame: EddystoneTelemetry, address: UInt64, at time: Timestamp) {
        statistics.telemetryFrames += 1
        if telemetry[address] == nil && telemetry.count >= Self.telemetryCapacity { telemetry.removeAll(keepingCapacity: true) }
        telemetry[address] = KeptTelemetry(frame: frame, heardAt: time)
    }

    /// The telemetry to attach to a beacon from `address` at `time`: the kept frame unless it is
    /// older than ``telemetryMaximumAge`` (then it is dropped).
    @inline(__always)
    mutating func telemetry(for address: UInt64, at time: Timestamp) -> EddystoneTelemetry? {
        guard !telemetry.isEmpty, let kept = telemetry[address] else { return nil }
        guard time - kept.heardAt <= telemetryMaximumAge else {
            telemetry[address] = nil
            return nil
        }
        return kept.frame
    }

    /// A beacon that is not an iBeacon in `data`: AltBeacon, Eddystone-UID, a layout's; TLM is stored.
    mutating func otherBeacon(in data: UnsafeRawBufferPointer, address: UInt64, at time: Timestamp) -> (BeaconIdentity, Int)? {
        switch BeaconFrame.nonIBeacon(in: data) {
        case .beacon(let identity, let power)?:
            return (identity, power)
        case .telemetry(let frame)?:
            store(frame, address: address, at: time)
            return nil
        case nil:
            for layout in layouts where layout.format != nil {
                if let decoded = try? layout.decode(UnsafeRawBufferPointer(data)), let identity = layout.identity(of: decoded) {
                    return (identity, decoded.measuredPower ?? 0)
                }
            }
            return nil
        }
    }

    /// Processes one HCI event packet (event code, length, parameters): every iBeacon it reports
    /// is passed to `observation`. Events that are not advertising reports, and malformed ones,
    /// are ignored (the command channel reports those).
    ///
    /// The common shape — an LE Advertising Report or LE Extended Advertising Report event
    /// carrying one report — is read in place without allocating; anything else goes through
    /// the full `HCIEvent` decoder. Both give the same observations and statistics.
    public mutating func process(event: UnsafeRawBufferPointer, at time: Timestamp, _ observation: (BeaconObservation) -> Void) {
        if processSingleReport(event, at: time, observation) { return }
        guard let decoded = try? HCIEvent(decoding: Array(event), advertisingReportLayout: layout) else {
            statistics.malformedEvents += 1
            return
        }
        process(decoded, at: time, sighting: nil, observation)
    }

    /// Handles a one-report advertising event in place; false when `event` has another shape.
    private mutating func processSingleReport(_ event: UnsafeRawBufferPointer, at time: Timestamp,
                                              _ observation: (BeaconObservation) -> Void) -> Bool {
        // 0x3E LE Meta, parameter length, subevent, Num_Reports = 1.
        guard event.count >= 4, event[0] == HCIEvent.leMetaCode, Int(event[1]) == event.count - 2, event[3] == 1 else { return false }
        let addressStart: Int, addressType: UInt8, isScanResponse: Bool, rawRSSI: Int8, dataStart: Int
        switch event[2] {
        case 0x02:
            // Event_Type, Address_Type, Address (6, LSB first), Data_Length, Data, RSSI.
            guard event.count >= 14, event.count == 14 + Int(event[12]) else { return false }
            isScanResponse = event[4] == LEAdvertisingReport.EventType.scanRsp.rawValue
            addressType = event[5]
            addressStart = 6
            dataStart = 13
            rawRSSI = Int8(bitPattern: event[event.count - 1])
        case 0x0D:
            // Event_Type (2), Address_Type, Address (6), Primary_PHY, Secondary_PHY, SID,
            // TX_Power, RSSI, Periodic_Advertising_Interval (2), Direct_Address_Type,
            // Direct_Address (6), Data_Length, Data.
            guard event.count >= 28, event.count == 28 + Int(event[27]) else { return false }
            isScanResponse = event[4] & UInt8(LEExtendedAdvertisingReport.EventType.scanResponse.rawValue) != 0
            addressType = event[6]
            addressStart = 7
            dataStart = 28
            rawRSSI = Int8(bitPattern: event[17])
        default:
            return false
        }
        var address: UInt64 = 0
        for index in (addressStart..<addressStart + 6).reversed() { address = address << 8 | UInt64(event[index]) }
        let telemetryKey = address | UInt64(addressType) << 48
        let data = UnsafeRawBufferPointer(rebasing: event[dataStart..<(event[2] == 0x02 ? event.count - 1 : event.count)])
        let isRepeat = deduplicator.isRepeat(address: address, addressType: addressType, isScanResponse: isScanResponse, data: data, at: time)
        guard admitFrame(isRepeat: isRepeat, at: time) else { return true }
        if let beacon = IBeaconFrame.identity(in: data) {
            emit(beacon.identity, measuredPower: Int(beacon.measuredPower), rssi: rawRSSI == 127 ? nil : rawRSSI,
                 telemetry: telemetry(for: telemetryKey, at: time), at: time, observation)
        } else if let (identity, power) = otherBeacon(in: data, address: telemetryKey, at: time) {
            if identity.format != .iBeacon { statistics.otherBeaconFrames += 1 }   // an iBeacon-shaped layout's frame counts as iBeacon (in emit)
            emit(identity, measuredPower: power, rssi: rawRSSI == 127 ? nil : rawRSSI, telemetry: telemetry(for: telemetryKey, at: time), at: time, observation)
        }
        return true
    }

    /// Processes a decoded event; `sighting` also receives every advertisement that is not a
    /// repeated scan response (for `regionkit scan`-style listings).
    public mutating func process(_ event: HCIEvent, at time: Timestamp, sighting: ((AdvertisementSighting) -> Void)?,
                                 _ observation: (BeaconObservation) -> Void) {
        for advertisement in event.advertisements {
            guard admitFrame(isRepeat: deduplicator.isRepeat(advertisement, at: time), at: time) else { continue }
            var decoded = AdvertisementSighting(advertisement: advertisement, timestamp: time)
            let address = Self.key(advertisement)
            if case .eddystone(.tlm(let frame)) = decoded.frame { store(frame, address: address, at: time) }
            if decoded.frame == nil, !layouts.isEmpty {
                decoded.decodeLayouts(layouts)
            }
            decoded.telemetry = telemetry(for: address, at: time)
            if let identity = decoded.identity {
                if identity.format != .iBeacon { statistics.otherBeaconFrames += 1 }
                emit(identity, measuredPower: decoded.measuredPower ?? 0, rssi: advertisement.rssi, telemetry: decoded.telemetry, at: time, observation)
            }
            sighting?(decoded)
        }
    }

    /// Counts a report; false when it is a scan-response repeat (dropped), else counts the frame.
    private mutating func admitFrame(isRepeat: Bool, at time: Timestamp) -> Bool {
        statistics.reports += 1
        if isRepeat {
            statistics.scanResponseRepeats += 1
            return false
        }
        statistics.frames += 1
        if statistics.firstFrame == nil { statistics.firstFrame = time }
        statistics.lastFrame = time
        return true
    }

    /// The telemetry map's key for an advertisement's address.
    static func key(_ advertisement: Advertisement) -> UInt64 {
        var address: UInt64 = 0
        for byte in advertisement.address.bytes { address = address << 8 | UInt64(byte) }
        return address | UInt64(advertisement.addressType.rawValue) << 48
    }

    /// Counts a beacon frame and, when the controller reported its RSSI, passes on its observation.
    private mutating func emit(_ identity: BeaconIdentity, measuredPower: Int, rssi: Int8?, telemetry: EddystoneTelemetry?, at time: Timestamp,
                               _ observation: (BeaconObservation) -> Void) {
        if identity.format == .iBeacon { statistics.iBeaconFrames += 1 }
        guard let rssi else { return }
        statistics.observations += 1
        observation(BeaconObservation(identity: identity, rssi: Int(rssi), measuredPower: measuredPower, timestamp: time, scannerID: scannerID,
                                      telemetry: telemetry))
    }
}
