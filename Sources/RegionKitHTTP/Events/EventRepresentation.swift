import Foundation
import RegionKitStore

/// The JSON form of a logged event in the API and the SSE stream: the log row's columns, and the
/// full event (evidence included) under `event`. A row whose time is not a finite number (only a
/// damaged store holds one: PostgreSQL keeps `NaN` and `Infinity`, SQLite infinities) has `time`
/// null: JSON has no such number, and the encoder's refusal made its whole page a 500.
enum EventRepresentation {
    static func object(_ event: StoredEvent) -> [String: Any] {
        var object: [String: Any] = ["id": event.id, "time": event.time.isFinite ? event.time : NSNull(), "type": event.type]
        object["region"] = event.region ?? NSNull()
        object["state"] = event.state ?? NSNull()
        object["reason"] = event.reason ?? NSNull()
        object["event"] = (try? JSONSerialization.jsonObject(with: Data(event.json.utf8))) ?? NSNull()
        return object
    }

    static func data(_ event: StoredEvent) -> Data {
        (try? JSONSerialization.data(withJSONObject: object(event), options: [.sortedKeys])) ?? Data("{}".utf8)
    }
}
