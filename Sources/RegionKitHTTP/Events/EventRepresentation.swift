import Foundation
import RegionKitStore

/// The JSON form of a logged event in the API and the SSE stream: the log row's columns, and the
/// full event (evidence included) under `event`.
enum EventRepresentation {
    static func object(_ event: StoredEvent) -> [String: Any] {
        var object: [String: Any] = ["id": event.id, "time": event.time, "type": event.type]
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
