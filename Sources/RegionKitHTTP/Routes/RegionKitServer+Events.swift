import Foundation
import HTTPTypes
import Hummingbird
import RegionKitStore

extension RegionKitServer {
    /// `GET /v1/events` (paged, filtered) and `GET /v1/events/stream` (Server-Sent Events).
    func addEventRoutes(to router: Router<BasicRequestContext>) {
        router.get("/v1/events") { request, _ in
            let query = request.uri.queryParameters
            let since = try Self.double(query.get("since"), "since")
            let limit = try Self.integer(query.get("limit"), "limit", range: 1...1_000) ?? 100
            let cursor = try Self.integer(query.get("cursor"), "cursor", range: 0...Int.max).map(Int64.init)
            let filter = try EventFilter(region: Self.formValue(request, "region"), type: query.get("type"))
            // One more than asked tells whether there is a next page.
            var page = try await self.metrics.timedStore("events") {
                try await self.backend.store.events(since: since, region: filter.region, type: filter.type, afterID: cursor, limit: limit + 1)
            }
            let more = page.count > limit
            if more { page.removeLast() }
            var object: [String: Any] = ["events": page.map(EventRepresentation.object)]
            object["nextCursor"] = more ? page.last.map { "\($0.id)" } ?? NSNull() : NSNull()
            return try Self.jsonObject(object)
        }
        // HEAD of the stream: its headers, without subscribing (the generated HEAD would run the
        // GET handler, whose subscription nobody would ever read or end).
        router.head("/v1/events/stream") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"])
        }
        router.get("/v1/events/stream") { request, _ in
            let query = request.uri.queryParameters
            let filter = try EventFilter(region: Self.formValue(request, "region"), type: query.get("type"))
            let header = request.headers[HTTPField.Name("Last-Event-ID")!]
            let fromQuery = query.get("lastEventId")
            var last: Int64
            if let text = header ?? fromQuery {
                let digits = text.trimmingCharacters(in: .whitespaces)
                // Digits past Int64 are an id past the end of any log (the document's pattern
                // allows them; they were a 400), handled below as one.
                let overflowing = !digits.isEmpty && digits.utf8.allSatisfy { (0x30...0x39).contains($0) }
                guard let id = Int64(digits) ?? (overflowing ? Int64.max : nil), id >= 0 else {
                    throw Problem(.badRequest, "Last-Event-ID '\(text.prefix(80))' is not an event id", field: header != nil ? "Last-Event-ID" : "lastEventId")
                }
                // Past the end of this log, the id is from another one (the daemon restarted on a
                // new store): every event here is new to the client. Skipping ids up to its old one
                // kept the stream silent until this log caught up; it gets this log from the start
                // instead, at most the newest `backlogLimit` events.
                let newest = try await self.backend.store.lastEventID()
                last = id > newest ? Self.before(newest, by: Self.backlogLimit) : id
            } else {
                // A new client starts with what is logged from now on (or `?backlog=N` recent events).
                let backlog = try Self.integer(query.get("backlog"), "backlog", range: 0...Self.backlogLimit) ?? 0
                let newest = try await self.backend.store.lastEventID()
                last = Self.before(newest, by: backlog)
                if backlog > 0, filter.region != nil || filter.type != nil {
                    // N events the filters let through, not N events of which the filters keep
                    // some (`?region=hall&backlog=20` gave the hall's share of the last 20): the
                    // newest N matching among the log's newest `backlogLimit`.
                    let window = try await self.backend.store.events(since: nil, region: filter.region, type: filter.type,
                                                                    afterID: Self.before(newest, by: Self.backlogLimit), limit: Self.backlogLimit)
                    let kept = window.suffix(backlog)
                    last = kept.first.map { $0.id - 1 } ?? newest
                }
            }
            let stream = EventStream(store: self.backend.store, broadcaster: self.events,
                                     filter: filter,
                                     keepAlive: .seconds(saturating: self.configuration.keepAliveInterval), lastID: last)
            return Response(status: .ok,
                            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache", HTTPField.Name("X-Accel-Buffering")!: "no"],
                            body: stream.body())
        }
    }

    /// The most stored events a new or resuming live stream starts with.
    static let backlogLimit = 10_000

    /// The id `count` events before `id`, at least 0 (the store's ids are read back, not trusted:
    /// one near Int64.min must not overflow).
    static func before(_ id: Int64, by count: Int) -> Int64 {
        let count = Int64(count)
        return id > count ? id - count : 0
    }

    static func double(_ text: String?, _ name: String) throws -> Double? {
        guard let text else { return nil }
        guard let value = Double(text), value.isFinite, abs(value) <= 1e15 else {
            throw Problem(.badRequest, "\(name) '\(text)' is not a number of seconds within ±1e15", field: name)
        }
        return value
    }

    static func integer(_ text: String?, _ name: String, range: ClosedRange<Int>) throws -> Int? {
        guard let text else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw Problem(.badRequest, "\(name) '\(text)' must be an integer from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return value
    }
}
