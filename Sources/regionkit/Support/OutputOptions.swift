import ArgumentParser

/// `--json`, shared by the commands that print either readable text or JSON (scan, bench parse,
/// bench geofence; simulate, replay and monitor through ``EventOutputOptions``).
///
/// ```swift
/// @OptionGroup var output: OutputOptions
/// if output.json { Console.line(object.jsonLine) } else { Console.line(object.description) }
/// ```
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON (one object per line) instead of readable text.")
    var json = false
}

/// `--json` and `--all-events`, shared by the commands that print monitoring events: simulate,
/// replay and monitor.
struct EventOutputOptions: ParsableArguments {
    @OptionGroup var output: OutputOptions

    @Flag(help: """
        Also print, in --json output, the events beyond Core Location's six callbacks: authorization \
        changes, ranging failures, nearest-scanner changes and (simulate) the app's actions.
        """)
    var allEvents = false

    var json: Bool { output.json }

    /// The printer these options ask for.
    func printer() -> EventPrinter { EventPrinter(json: json, allEvents: allEvents) }
}
