import ArgumentParser

/// `regionkit eval`: the detection-quality instruments (issue "Measure and win").
struct Eval: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure detection quality: exits, false exits, flaps, room assignment.",
        subcommands: [EvalReplay.self]
    )
}
