import ArgumentParser
import Foundation
import Logging
import RegionKit
import RegionKitPostgres
import RegionKitStore

struct Events: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the event log: a readable timeline, or JSON lines.",
        discussion: "Every event is stored with the evidence behind it (RSSI, scanner, silence, threshold, distance)."
    )

    @Option(help: "The store: a SQLite path or postgres://user@host:port/database (password in $REGIONKIT_STORE_PASSWORD, or the file $REGIONKIT_STORE_PASSWORD_FILE names). Default: $REGIONKIT_STORE, else $XDG_DATA_HOME/regionkit/regionkit.sqlite.")
    var store: String?

    @Option(help: "Only events at or after T: ISO 8601 (2026-11-22T05:00:00Z), Unix seconds, or an age like 30s, 10m, 2h, 1d.")
    var since: String?

    @Option(help: "Only events of this region.")
    var region: String?

    @Flag(help: "Print the stored JSON objects, one per line (with their log id).")
    var json = false

    @Flag(help: "Keep printing new events as they are logged (until interrupted).")
    var follow = false

    @Option(parsing: .unconditional, help: "At most this many events (the oldest matching first); with --follow, stop once this many are printed.")
    var limit: Int?

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be >= 0, got \(limit)") }
    }

    func run() async throws {
        try await Console.reportingErrors {
            let path = store ?? RegionStore.defaultPath()
            let database: any RegionStoring
            var postgres: PostgresRegionStore?
            if let url = try PostgresStoreURL(parsing: path) {
                let logger = Console.logger(label: "regionkit.postgres")
                let opened = try await PostgresRegionStore(host: url.host, port: url.port, username: url.user, password: url.password(),
                                                           database: url.database, tls: url.tls(), logger: logger)
                postgres = opened
                database = opened
            } else {
                guard FileManager.default.fileExists(atPath: path) else {
                    throw RegionKitError(.invalidArgument, "no store at \(path) (use --store or REGIONKIT_STORE)")
                }
                // A read-only command: an empty file is not turned into a store (as `run` would).
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue
                guard size != 0 else {
                    throw RegionKitError(.invalidArgument, "\(path) is empty, not a store yet (the daemon makes it one at its first start)")
                }
                database = try RegionStore(path: path)
            }
            let now = Date()
            let start = try since.map { try Self.parseTime($0, now: now) }
            var last: Int64?
            var printed = 0
            func show(_ events: [StoredEvent]) {
                for event in events {
                    if json { Console.line(Self.jsonLine(event)) } else { Console.textLine(Self.timelineLine(event)) }
                    last = event.id
                    printed += 1
                }
            }
            // What --limit leaves to print (nil: no limit). Following went on for ever with a
            // limit, which then bounded only the first read.
            var remaining: Int? { limit.map { max(0, $0 - printed) } }
            do {
                show(try await database.events(since: start, region: region, type: nil, afterID: nil, limit: limit))
                while follow && remaining != 0 && !Task.isCancelled {
                    try await Task.sleep(for: .milliseconds(300))
                    show(try await database.events(since: start, region: region, type: nil, afterID: last, limit: remaining))
                }
            } catch {
                await postgres?.shutdown()
                throw error
            }
            await postgres?.shutdown()
            // Nothing printed for a time to come: say so, rather than look like an empty log.
            if let start, start > now.timeIntervalSince1970, printed == 0, !follow {
                Console.note("--since \(Self.iso(start)) is in the future (it is \(Self.iso(now.timeIntervalSince1970)) now): no events yet; add --follow to wait for them")
            }
        }
    }

    /// The stored JSON with the log id and wall-clock time added.
    static func jsonLine(_ event: StoredEvent) -> String { event.jsonLine }

    static func timelineLine(_ event: StoredEvent) -> String {
        let label: String = switch event.type {
        case "didEnterRegion": "ENTER "
        case "didExitRegion": "EXIT  "
        case "didDetermineState": "STATE "
        case "didStartMonitoring": "START "
        case "monitoringStopped": "STOP  "
        case "monitoringDidFail": "FAIL  "
        case "rangedBeaconCountChanged": "RANGE "
        case "processStarted": "LAUNCH"
        case "processStopped": "EXITED"
        case "sourceStatusChanged": "SOURCE"
        case "didChangeNearestScanner": "ROOM  "
        case "didChangeAuthorization": "AUTH  "
        default: event.type
        }
        var text = "\(iso(event.time))  \(label) \(event.region ?? "")"
        // Events of no region say what they are about from their JSON: a beacon's room, a source's status.
        if event.region == nil, let object = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8))) as? [String: Any] {
            switch event.type {
            case "didChangeNearestScanner":
                text += "\(object["beacon"] as? String ?? "?") in \(object["scanner"] as? String ?? "no room (not_home)")"
            case "didChangeAuthorization":
                text += "\(object["source"] as? String ?? "?") source \(object["status"] as? String ?? "?")"
            default:
                break
            }
        }
        if let state = event.state, event.type == "didDetermineState" { text += " is \(state)" }
        if let state = event.state, event.type == "sourceStatusChanged" { text += state }
        if let reason = event.reason { text += " — \(reason)" }
        return text
    }

    static func iso(_ seconds: Double) -> String { StoredEvent.iso(seconds) }

    /// 5000-01-01T00:00:00Z in Unix seconds: a `--since` number beyond it (either way) is refused,
    /// as milliseconds when it divides by 1000 into a time.
    static let largestUnixSeconds: Double = 95_617_584_000

    static func parseTime(_ text: String, now: Date) throws -> Double {
        if let seconds = Double(text) {
            guard seconds.isFinite else { throw RegionKitError(.invalidArgument, "--since '\(text)' must be a finite number of Unix seconds") }
            // Beyond the year 5000 in seconds: Unix milliseconds (what JavaScript and many
            // gateways write), which would silently select nothing.
            guard abs(seconds) < Self.largestUnixSeconds else {
                if seconds > 0, seconds / 1000 < Self.largestUnixSeconds {
                    throw RegionKitError(.invalidArgument, "--since '\(text)' is too large for Unix seconds (after the year 5000): milliseconds? Divide by 1000: \(String(format: "%.3f", seconds / 1000))")
                }
                throw RegionKitError(.invalidArgument, "--since '\(text)' is not a time: Unix seconds must be within ±95617584000 (the year 5000)")
            }
            return seconds
        }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let unit = text.last, let scale = units[unit], let amount = Double(text.dropLast()), amount.isFinite, amount >= 0 {
            // An age reaching before 1970 (a typo of a few digits more) selected every event silently.
            guard amount * scale <= now.timeIntervalSince1970 else {
                throw RegionKitError(.invalidArgument, "--since '\(text.prefix(40))' reaches back before 1970: give a shorter age, or no --since for every event")
            }
            return now.timeIntervalSince1970 - amount * scale
        }
        let formatter = ISO8601DateFormatter()
        func date(_ text: String) -> Date? {
            for options in [ISO8601DateFormatter.Options.withInternetDateTime, [.withInternetDateTime, .withFractionalSeconds]] {
                formatter.formatOptions = options
                if let date = formatter.date(from: text) { return date }
            }
            return nil
        }
        if let date = date(text) { return date.timeIntervalSince1970 }
        // A time or a day without its zone: which one is meant is not guessed (UTC, the host's?).
        for completed in [text + "Z", text + "T00:00:00Z"] where date(completed) != nil {
            throw RegionKitError(.invalidArgument, "--since '\(text)' has no time zone: give one, '\(completed)' for UTC or an offset such as +01:00")
        }
        throw RegionKitError(.invalidArgument, "--since '\(text)' is not ISO 8601 with a time zone (2026-12-05T08:00:00Z), Unix seconds, or an age like 10m")
    }
}
