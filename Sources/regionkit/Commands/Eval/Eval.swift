import ArgumentParser

/// `regionkit eval`: measurement instruments that print tables or JSON lines (run them from a
/// release build: `swift run -c release regionkit eval ...`).
struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure detection and distance quality: exits and false exits in simulation and on real recordings, distance error.",
        subcommands: [EvalDetection.self, EvalReplay.self, EvalDistance.self]
    )
}
