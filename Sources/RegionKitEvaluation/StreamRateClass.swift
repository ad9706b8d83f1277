/// How often a sighting stream (one beacon at one scanner) reports, in the three classes gateway
/// deployments show: every advertisement (≈10 Hz), about once a second (≈1 Hz), about once every
/// five seconds (≈0.2 Hz). A measured rate goes to the nearest class on a log scale: the bounds
/// are the geometric means √(10·1) ≈ 3.16 Hz and √(1·0.2) ≈ 0.447 Hz.
///
/// ```swift
/// StreamRateClass(rate: 8.7)   // .tenHertz
/// StreamRateClass(rate: 2.1)   // .oneHertz
/// StreamRateClass(rate: 0.07)  // .fifthHertz
/// ```
public enum StreamRateClass: String, CaseIterable, Comparable, Sendable {
    case tenHertz = "10Hz"
    case oneHertz = "1Hz"
    case fifthHertz = "0.2Hz"

    /// Lower bound of ``tenHertz``, Hz.
    public static let tenHertzBound = (10.0 * 1.0).squareRoot()
    /// Lower bound of ``oneHertz``, Hz.
    public static let oneHertzBound = (1.0 * 0.2).squareRoot()

    /// The class of a stream received `rate` times per second.
    public init(rate: Double) {
        if rate >= Self.tenHertzBound {
            self = .tenHertz
        } else if rate >= Self.oneHertzBound {
            self = .oneHertz
        } else {
            self = .fifthHertz
        }
    }

    /// For tables: "≈10 Hz", "≈1 Hz", "≈0.2 Hz".
    public var label: String {
        switch self {
        case .tenHertz: "≈10 Hz"
        case .oneHertz: "≈1 Hz"
        case .fifthHertz: "≈0.2 Hz"
        }
    }

    public static func < (lhs: StreamRateClass, rhs: StreamRateClass) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
