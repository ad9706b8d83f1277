import Foundation

/// One fuzz target: a name (the corpus folder under Fuzz/Corpus and the argument of scripts/fuzz.sh)
/// and the function libFuzzer calls with each input. A target must never trap on any input; a
/// violated invariant is reported with ``FuzzTarget/fail(_:)`` (which aborts, so libFuzzer keeps the input).
///
/// ```swift
/// let target = FuzzTarget.select(from: [FuzzTarget(name: "nmea", run: NMEAFuzz.run)])
/// ```
public struct FuzzTarget: Sendable {
    public let name: String
    public let run: @Sendable ([UInt8]) -> Void

    public init(name: String, run: @escaping @Sendable ([UInt8]) -> Void) {
        self.name = name
        self.run = run
    }

    /// The target named by `REGIONKIT_FUZZ_TARGET`; exits with status 2 and the list when unknown.
    public static func select(from targets: [FuzzTarget]) -> FuzzTarget {
        let name = ProcessInfo.processInfo.environment["REGIONKIT_FUZZ_TARGET"] ?? ""
        guard let target = targets.first(where: { $0.name == name }) else {
            let names = targets.map(\.name).joined(separator: " ")
            FileHandle.standardError.write(Data("set REGIONKIT_FUZZ_TARGET to one of: \(names)\n".utf8))
            exit(2)
        }
        return target
    }

    /// Reports a broken invariant and aborts (libFuzzer writes the input as a crash file).
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("RegionKitFuzz invariant violated: \(message)\n".utf8))
        abort()
    }
}
