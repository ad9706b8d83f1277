import RegionKitCore
/// A distance model corrected for the receiving device: its RSSI is read `offset` dB lower before
/// the base model sees it, `d = base(rssi − offset, measuredPower)`.
///
/// Phones and gateways differ in antenna gain and in how they report RSSI by several dB (in the
/// Herald reference recordings the same beacon at 1 m reads −64 dBm on a Samsung J6 and −73 dBm on
/// a Samsung A10). A model fitted with one receiver applies to another once that offset is known;
/// `DistanceCalibration.deviceOffset` (RegionKitEvaluation, `regionkit calibrate --model`) learns
/// it from a short recording at known distances. A positive offset means the device reads stronger
/// than the one the model was calibrated with.
///
/// ```swift
/// let base = LinearDistanceModel(intercept: 1, slope: 0.1)
/// let model = DeviceOffsetDistanceModel(base: base, offset: 6)
/// model.distance(rssi: -64, measuredPower: -60) // 1.0 m: −64 dBm read here is −70 dBm for the base
/// ```
public struct DeviceOffsetDistanceModel: DistanceModel {
    /// The model as calibrated with the reference receiver.
    public var base: any DistanceModel
    /// dB this device reads above the reference receiver.
    public var offset: Double

    /// The largest offset accepted from files and calibrations, dB (receivers differ by ±20 dB at most).
    public static let maximumOffset = 60.0

    public init(base: any DistanceModel, offset: Double) {
        self.base = base
        self.offset = offset
    }

    /// The base model's name with the offset, e.g. `regionkit-linear+device(-9.0dB)`.
    public var name: String {
        let tenths = (offset * 10).rounded() / 10
        return "\(base.name)+device(\(tenths)dB)"
    }

    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard rssi != 0, rssi.isFinite, offset.isFinite else { return nil }
        return base.distance(rssi: rssi - offset, measuredPower: measuredPower)
    }
}
