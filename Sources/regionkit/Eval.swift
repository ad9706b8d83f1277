import ArgumentParser

/// `regionkit eval`: instruments that measure detection quality (run them from a release build).
struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure detection quality: exit latency, false exits (run a release build: swift run -c release regionkit eval ...).",
        subcommands: [EvalDetection.self]
    )
}
