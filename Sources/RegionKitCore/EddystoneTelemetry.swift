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
///
/// Scanners that forward only what they decoded from a TLM frame (ESPresense's `mV` and `temp`)
/// give battery and temperature without the counters: ``init(batteryMillivolts:temperature:)``,
/// with ``advertisingCount`` and ``uptimeDeciseconds`` nil.
public struct EddystoneTelemetry: Hashable, Sendable, Codable {
    /// TLM version (0 = unencrypted, the only one decoded here).
    public var version: UInt8
    /// VBATT in mV, `nil` when the beacon reports 0 (not supported).
    public var batteryMillivolts: UInt16?
    /// TEMP as sent: signed 8.8 fixed point; 0x8000 (as `Int16.min`) = not supported.
    public var temperatureRaw: Int16
    /// ADV_CNT; nil when the telemetry came through a scanner that does not forward it.
    public var advertisingCount: UInt32?
    /// SEC_CNT, tenths of a second; nil when the telemetry came through a scanner that does not forward it.
    public var uptimeDeciseconds: UInt32?

    public init(version: UInt8 = 0, batteryMillivolts: UInt16?, temperatureRaw: Int16, advertisingCount: UInt32?, uptimeDeciseconds: UInt32?) {
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

    /// Battery and temperature as a scanner reports them after decoding a TLM frame: millivolts
    /// (nil or 0: not supported) and °C, stored as TEMP's 8.8 fixed point rounded to 1/256 °C.
    /// A temperature that TEMP cannot carry (nil, not finite, outside −127.996…127.996 °C, or
    /// −128 °C, which is 0x8000, "not supported") is stored as not supported; the battery is kept
    /// either way. No counters.
    ///
    /// ```swift
    /// EddystoneTelemetry(batteryMillivolts: 3000, temperature: 24.5).temperatureRaw   // 0x1880
    /// EddystoneTelemetry(batteryMillivolts: 3000, temperature: -128).temperature      // nil (0x8000)
    /// ```
    public init(batteryMillivolts: UInt16?, temperature: Double?) {
        var raw = Int16.min
        if let temperature {
            let fixed = (temperature * 256).rounded()
            if fixed.isFinite, fixed >= -32767, fixed <= 32767 { raw = Int16(fixed) }
        }
        self.init(batteryMillivolts: batteryMillivolts, temperatureRaw: raw, advertisingCount: nil, uptimeDeciseconds: nil)
    }

    /// Whether the frame carries neither a battery voltage nor a temperature (both "not supported").
    public var isEmptyOfReadings: Bool { batteryMillivolts == nil && temperatureRaw == Int16.min }

    /// Uptime in seconds; nil without SEC_CNT.
    public var uptime: Double? { uptimeDeciseconds.map { Double($0) / 10 } }

    /// The 14 frame bytes (absent counters are sent as 0).
    public var frameBytes: [UInt8] {
        let battery = batteryMillivolts ?? 0
        let temp = UInt16(bitPattern: temperatureRaw)
        return [EddystoneFrame.typeTLM, version, UInt8(battery >> 8), UInt8(battery & 0xFF), UInt8(temp >> 8), UInt8(temp & 0xFF)]
            + Self.bigEndian(advertisingCount ?? 0) + Self.bigEndian(uptimeDeciseconds ?? 0)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
