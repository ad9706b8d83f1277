import ArgumentParser

/// `regionkit eval`: measurement instruments that print tables (or JSON lines).
struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Evaluate RegionKit against the tools users pick today: distance estimates, exits on real gateway recordings.",
        subcommands: [EvalReplay.self, EvalDistance.self]
    )
}
