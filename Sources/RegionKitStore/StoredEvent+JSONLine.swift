import Foundation
import RegionKit
import Synchronization

extension StoredEvent {
    /// The stored JSON object with the log id and the wall-clock time added: what `regionkit run
    /// --json` and `regionkit events --json` print and what the MQTT events topic carries.
    ///
    /// ```swift
    /// event.jsonLine   // {"id":42,"time":"2026-11-23T06:10:00.000Z","t":1763878200,"type":"didEnterRegion","region":"lobby",…}
    /// ```
    public var jsonLine: String {
        var text = json
        guard text.hasPrefix("{") else { return text }
        text.removeFirst()
        let separator = text.hasPrefix("}") ? "" : ","
        return "{\"id\":\(id),\"time\":\(JSONLine.quote(Self.iso(time)))" + separator + text
    }

    /// ISO 8601 with milliseconds, UTC.
    public static func iso(_ seconds: Double) -> String {
        isoFormatter.withLock { $0.string(from: Date(timeIntervalSince1970: seconds)) }
    }

    /// One formatter, used under its lock (a formatter is not safe to share between threads):
    /// creating one per call (an ICU date format each time) was a quarter of the MQTT events
    /// publisher's time under a backlog (`perf`, session 48).
    private static let isoFormatter: Mutex<ISO8601DateFormatter> = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return Mutex(formatter)
    }()
}
