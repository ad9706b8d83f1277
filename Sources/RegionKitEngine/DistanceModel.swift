import RegionKitCore
import Foundation

/// Turns an RSSI and the beacon's measured power (RSSI at 1 m) into an estimated distance.
///
/// Models are small swappable values; the engine's profile holds one.
///
/// ```swift
/// let model: any DistanceModel = CurveDistanceModel.coreLocation
/// model.distance(rssi: -75, measuredPower: -59) // ≈ 5.8 m
/// ```
public protocol DistanceModel: Sendable {
    /// A short name for tables and JSON (`"ios-curve"`, `"log-distance(2.7)"`...).
    var name: String { get }
    /// Estimated distance in metres, or `nil` when it cannot be estimated (RSSI 0 = not heard).
    func distance(rssi: Double, measuredPower: Double) -> Double?
}

/// The power-law curve used by iOS-like and Android Beacon Library estimators:
/// `d = a · (rssi/power)^b + c`, and `(rssi/power)^10` below a ratio of 1.
///
/// ```swift
/// CurveDistanceModel.coreLocation.distance(rssi: -59, measuredPower: -59) // ≈ 1.011 m
/// ```
public struct CurveDistanceModel: DistanceModel, Hashable, Codable {
    public var coefficient: Double
    public var exponent: Double
    public var offset: Double
    public var name: String

    public init(coefficient: Double, exponent: Double, offset: Double, name: String = "curve") {
        self.coefficient = coefficient
        self.exponent = exponent
        self.offset = offset
        self.name = name
    }

    /// The curve commonly attributed to iOS: 0.89976 · r^7.7095 + 0.111.
    public static let coreLocation = CurveDistanceModel(coefficient: 0.89976, exponent: 7.7095, offset: 0.111, name: "ios-curve")
    /// The Android Beacon Library default (Nexus 5): 0.42093 · r^6.9476 + 0.54992.
    public static let androidNexus5 = CurveDistanceModel(coefficient: 0.42093, exponent: 6.9476, offset: 0.54992, name: "android-nexus5")

    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard rssi != 0, rssi.isFinite, measuredPower < 0 else { return nil }
        let ratio = rssi / measuredPower
        if ratio < 1 { return pow(ratio, 10) }
        return coefficient * pow(ratio, exponent) + offset
    }
}

/// The log-distance path-loss model: `d = 10^((power − rssi) / (10 · n))`.
///
/// ```swift
/// LogDistanceModel(exponent: 2.7).distance(rssi: -86, measuredPower: -59) // 10 m
/// ```
public struct LogDistanceModel: DistanceModel, Hashable, Codable {
    /// The path-loss exponent n (2 in free space; ESPresense defaults to 2.7 indoors).
    public var exponent: Double
    public var name: String { "log-distance(\(exponent))" }

    public init(exponent: Double = 2.7) {
        self.exponent = exponent
    }

    public func distance(rssi: Double, measuredPower: Double) -> Double? {
        guard rssi != 0, rssi.isFinite, measuredPower.isFinite, exponent > 0 else { return nil }
        return pow(10, (measuredPower - rssi) / (10 * exponent))
    }
}
