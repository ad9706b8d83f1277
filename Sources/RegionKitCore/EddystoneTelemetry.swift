/// An unencrypted Eddystone-TLM frame (github.com/google/eddystone, eddystone-tlm/tlm-plain.md
/// "Frame Specification"): the beacon's battery, temperature and counters. It carries no identity;
/// a scanner attaches it to the beacon heard from the same transmitter address.
/// ```
/// 20          Frame Type: TLM (0x20)
/// 00          Version: TLM version, 0x00 for unencrypted
/// VV VV       VBATT: battery voltage, 1 mV/bit, big-endian; 0 when not supported
/// TT TT       TEMP: beacon temperature, signed 8.8 fixed point °C, big-endian; 0x8000 when not supported
/// <4 bytes>   ADV_CNT: advertising PDUs sent since power-on or reboot, big-endian
/// <4 bytes>   SEC_CNT: time since power-on or reboot, 0.1 s resolution, big-endian
/// ```
///
/// ```swift
/// let tlm = EddystoneTelemetry(batteryMillivolts: 3000, temperatureRaw: 0x1880, advertisingCount: 100, uptimeDeciseconds: 600)
/// tlm.temperature // 24.5
/// ```
public struct EddystoneTelemetry: Hashable, Sendable, Codable {
    /// TLM version (0 = unencrypted, the only one decoded here).
    public var version: UInt8
    /// VBATT in mV, `nil` when the beacon reports 0 (not supported).
    public var batteryMillivolts: UInt16?
    /// TEMP as sent: signed 8.8 fixed point; 0x8000 (as `Int16.min`) = not supported.
    public var temperatureRaw: Int16
    /// ADV_CNT.
    public var advertisingCount: UInt32
    /// SEC_CNT, tenths of a second.
    public var uptimeDeciseconds: UInt32

    public init(version: UInt8 = 0, batteryMillivolts: UInt16?, temperatureRaw: Int16, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        self.version = version
        self.batteryMillivolts = batteryMillivolts == 0 ? nil : batteryMillivolts
        self.temperatureRaw = temperatureRaw
        self.advertisingCount = advertisingCount
        self.uptimeDeciseconds = uptimeDeciseconds
    }

    /// Temperature in °C, `nil` when not supported (raw 0x8000).
    public var temperature: Double? {
        temperatureRaw == Int16.min ? nil : Double(temperatureRaw) / 256
    }

    /// Uptime in seconds.
    public var uptime: Double { Double(uptimeDeciseconds) / 10 }

    /// The 14 frame bytes.
    public var frameBytes: [UInt8] {
        let battery = batteryMillivolts ?? 0
        let temp = UInt16(bitPattern: temperatureRaw)
        return [EddystoneFrame.typeTLM, version, UInt8(battery >> 8), UInt8(battery & 0xFF), UInt8(temp >> 8), UInt8(temp & 0xFF)]
            + Self.bigEndian(advertisingCount) + Self.bigEndian(uptimeDeciseconds)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
