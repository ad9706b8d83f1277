import Foundation
import Testing
import RegionKitCore
import RegionKitEngine
import RegionKitStore

/// The behaviour every ``RegionStoring`` must have, one check per capability the service uses.
/// Each check starts from an empty store and fails with what differs. Run against SQLite
/// (``SQLiteStoreConformanceTests``) and against a real PostgreSQL (``PostgresStoreConformanceTests``).
enum StoreConformance: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case regions
    case states
    case eventLog
    case hookDeliveries
    case hookOrderPerRegion
    case boundedQueue
    case outputCursors
    case beaconRooms
    case concurrentAppends
    case batches
    case retention
    case health
    case canonicalIdentifiers
    case keyedReads

    var testDescription: String { rawValue }

    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    func run(on store: some RegionStoring) async throws {
        switch self {
        case .regions: try await Self.regions(store)
        case .states: try await Self.states(store)
        case .eventLog: try await Self.eventLog(store)
        case .hookDeliveries: try await Self.hookDeliveries(store)
        case .hookOrderPerRegion: try await Self.hookOrderPerRegion(store)
        case .boundedQueue: try await Self.boundedQueue(store)
        case .outputCursors: try await Self.outputCursors(store)
        case .beaconRooms: try await Self.beaconRooms(store)
        case .concurrentAppends: try await Self.concurrentAppends(store)
        case .batches: try await Self.batches(store)
        case .retention: try await Self.retention(store)
        case .health: try await store.checkWritable()
        case .canonicalIdentifiers: try await Self.canonicalIdentifiers(store)
        case .keyedReads: try await Self.keyedReads(store)
        }
    }

    /// Registration order, replacement in place (definition and flags replaced, state forgotten),
    /// origins (nil keeps, explicit replaces), removal.
    static func regions(_ store: some RegionStoring) async throws {
        #expect(try await store.storedRegions().isEmpty)
        var lobby = try BeaconRegion(identifier: "lobby", uuid: uuid, major: 3)
        lobby.notifyEntryStateOnDisplay = true
        lobby.notifyOnExit = false
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 48.85, longitude: 2.35, radius: 30))
        try await store.saveRegion(.beacon(lobby), at: 10, origin: nil)
        try await store.saveRegion(park, at: 11, origin: .api)
        try await store.saveRegion(.beacon(try BeaconRegion(identifier: "desk", uuid: uuid, major: 3, minor: 7)), at: 12, origin: .configuration)
        #expect(try await store.storedRegions().map(\.region).map(\.identifier) == ["lobby", "park", "desk"])
        #expect(try await store.storedRegions().map(\.region).first == .beacon(lobby), "flags survive")
        let stored = try await store.storedRegions()
        #expect(stored.map(\.origin) == [.configuration, .api, .configuration])
        #expect(stored.map(\.registeredAt) == [10, 11, 12])
        #expect(try await store.regionOrigins() == ["lobby": .configuration, "park": .api, "desk": .configuration])

        try await store.saveState("lobby", state: .inside, since: 13, evidence: nil, at: 13)
        try await store.saveRegion(.beacon(try BeaconRegion(identifier: "lobby", uuid: uuid, major: 9)), at: 20, origin: .api)
        try await store.saveRegion(.circular(try CircularRegion(identifier: "park", latitude: 48.85, longitude: 2.35, radius: 80)), at: 21, origin: nil)
        let replaced = try await store.storedRegions()
        #expect(replaced.map(\.region.identifier) == ["lobby", "park", "desk"], "replacing keeps the place")
        #expect(replaced[0].region.beaconRegion?.major == 9 && replaced[0].origin == .api && replaced[0].registeredAt == 20)
        #expect(replaced[1].origin == .api, "origin nil keeps the stored origin")
        #expect(try await store.states()["lobby"] == nil, "replacing forgets the state")

        try await store.saveState("desk", state: .outside, since: 14, evidence: nil, at: 14)
        try await store.removeRegion("desk")
        #expect(try await store.storedRegions().map(\.region).map(\.identifier) == ["lobby", "park"])
        #expect(try await store.states()["desk"] == nil, "removing forgets the state")
        try await store.removeRegion("never-saved")
        try await store.saveRegion(.beacon(try BeaconRegion(identifier: "desk", uuid: uuid)), at: 30, origin: nil)
        #expect(try await store.storedRegions().map(\.region).map(\.identifier) == ["lobby", "park", "desk"], "a region saved again goes last")

        // One region by its identifier: what the whole list holds for it, or nil.
        for region in try await store.storedRegions() {
            #expect(try await store.storedRegion(region.region.identifier) == region)
        }
        #expect(try await store.storedRegion("never-saved") == nil)
        #expect(try await store.storedRegion("LOBBY") == nil, "identifiers are compared exactly")
    }

    /// One identifier in its two Unicode spellings — `é` precomposed (NFC) and `e` + U+0301
    /// (NFD), equal as Swift compares text — is one region: one row, kept in NFC, found, given a
    /// state, filtered in the log and removed by either spelling. (The stores compared bytes: the
    /// same region put in both spellings was two rows, and a deleted one came back at a restart.)
    static func canonicalIdentifiers(_ store: some RegionStoring) async throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try #require(Array(composed.utf8) != Array(decomposed.utf8) && composed == decomposed, "two spellings Swift equates")
        try await store.saveRegion(.beacon(try BeaconRegion(identifier: decomposed, uuid: uuid, major: 1)), at: 10, origin: .api)
        try await store.saveRegion(.beacon(try BeaconRegion(identifier: composed, uuid: uuid, major: 2)), at: 11, origin: .api)
        let stored = try await store.storedRegions()
        #expect(stored.map { Array($0.region.identifier.utf8) } == [Array(composed.utf8)], "one row, in NFC")
        #expect(stored.first?.region.beaconRegion?.major == 2, "the second spelling replaced the first")
        #expect(try await store.storedRegion(decomposed)?.region.beaconRegion?.major == 2)
        try await store.saveState(decomposed, state: .inside, since: 12, evidence: nil, at: 12)
        #expect(try await store.state(of: composed)?.state == .inside)
        #expect(try await store.states().keys.map { Array($0.utf8) } == [Array(composed.utf8)])
        _ = try await store.append(time: 13, type: "didEnterRegion", region: composed, state: "inside", reason: nil, json: "{}", hooks: [])
        #expect(try await store.events(since: nil, region: decomposed, type: nil, afterID: nil, limit: nil).count == 1)
        try await store.removeRegion(decomposed)
        #expect(try await store.storedRegions().isEmpty)
        #expect(try await store.states().isEmpty)
    }

    /// The origins and states of some regions read by key (a page of `GET /v1/regions`), as the
    /// whole reads give them: those asked for only, absent ones left out, either Unicode spelling,
    /// an identifier asked twice, none asked, and more than one statement's worth of keys.
    static func keyedReads(_ store: some RegionStoring) async throws {
        #expect(try await store.regionOrigins(of: ["lobby"]).isEmpty)
        #expect(try await store.states(of: ["lobby"]).isEmpty)
        let evidence = EventEvidence(rssi: -61, scannerID: "hall", lastSightingAge: 2.5, reason: "first sighting")
        let names = (0..<1_200).map { "room-\($0)" } + ["caf\u{E9}"]
        for (index, name) in names.enumerated() {
            try await store.saveRegion(.beacon(try BeaconRegion(identifier: name, uuid: uuid, major: UInt16(index % 60_000))), at: Double(index),
                                       origin: index.isMultiple(of: 3) ? .api : .configuration)
            if index.isMultiple(of: 2) {
                try await store.saveState(name, state: .inside, since: Double(index), evidence: index.isMultiple(of: 4) ? evidence : nil, at: Double(index))
            }
        }
        let (allOrigins, allStates) = (try await store.regionOrigins(), try await store.states())
        let asked = ["room-4", "room-5", "room-4", "nowhere", "cafe\u{301}"]
        #expect(try await store.regionOrigins(of: asked) == allOrigins.filter { ["room-4", "room-5", "caf\u{E9}"].contains($0.key) })
        #expect(try await store.states(of: asked) == allStates.filter { ["room-4", "caf\u{E9}"].contains($0.key) })
        #expect(try await store.states(of: asked)["room-4"]?.evidence == evidence)
        #expect(try await store.regionOrigins(of: []).isEmpty)
        #expect(try await store.states(of: []).isEmpty)
        // Every region at once: more keys than one statement binds.
        #expect(try await store.regionOrigins(of: names) == allOrigins)
        #expect(try await store.states(of: names) == allStates && allStates.count == 601)
    }

    /// Upserts, optional fields, evidence as it was given.
    static func states(_ store: some RegionStoring) async throws {
        #expect(try await store.states().isEmpty)
        let evidence = EventEvidence(rssi: -61, scannerID: "hall", lastSightingAge: 2.5, reason: "first sighting")
        try await store.saveState("lobby", state: .inside, since: 12, evidence: evidence, at: 12)
        try await store.saveState("park", state: .unknown, since: nil, evidence: nil, at: 13)
        var states = try await store.states()
        #expect(states["lobby"] == RegionStore.StoredState(.inside, since: 12, evidence: evidence, updatedAt: 12))
        #expect(states["park"] == RegionStore.StoredState(.unknown, since: nil, evidence: nil, updatedAt: 13))
        try await store.saveState("lobby", state: .outside, since: 40.25, evidence: nil, at: 41)
        states = try await store.states()
        #expect(states.count == 2)
        #expect(states["lobby"] == RegionStore.StoredState(.outside, since: 40.25, evidence: nil, updatedAt: 41))
        // One region's state by its identifier.
        #expect(try await store.state(of: "lobby") == states["lobby"])
        #expect(try await store.state(of: "park") == states["park"])
        #expect(try await store.state(of: "hall") == nil)
        // A store keeps what it decoded last (StoredEvidenceCache): a changed evidence is the new one.
        let later = EventEvidence(lastSightingAge: 8.5, reason: "no sighting for 8.5 s")
        try await store.saveState("lobby", state: .inside, since: 50, evidence: evidence, at: 50)
        #expect(try await store.states()["lobby"]?.evidence == evidence)
        try await store.saveState("lobby", state: .outside, since: 60, evidence: later, at: 60)
        #expect(try await store.states()["lobby"]?.evidence == later)
        #expect(try await store.states()["park"]?.evidence == nil)
    }

    /// Ids increase from 1; every filter alone and together; counts and the last id.
    static func eventLog(_ store: some RegionStoring) async throws {
        #expect(try await store.lastEventID() == 0)
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).isEmpty)
        let json = #"{"event":"didEnterRegion","region":"lobby","évidence":"ünïcode ✓"}"#
        let first = try await store.append(time: 100, type: "didEnterRegion", region: "lobby", state: "inside", reason: "first sighting", json: json, hooks: [])
        let second = try await store.append(time: 200, type: "didExitRegion", region: "lobby", state: "outside", reason: "silence", json: "{}", hooks: [])
        let third = try await store.append(time: 200.5, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
        let fourth = try await store.append(time: 300, type: "didEnterRegion", region: "park", state: "inside", reason: nil, json: "{}", hooks: [])
        #expect(first >= 1 && second > first && third > second && fourth > third)
        #expect(try await store.lastEventID() == fourth)
        let all = try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil)
        #expect(all.map(\.id) == [first, second, third, fourth])
        #expect(all[0] == StoredEvent(id: first, time: 100, type: "didEnterRegion", region: "lobby", state: "inside", reason: "first sighting", json: json))
        #expect(all[2] == StoredEvent(id: third, time: 200.5, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}"))
        #expect(try await store.events(since: 200, region: nil, type: nil, afterID: nil, limit: nil).map(\.id) == [second, third, fourth])
        #expect(try await store.events(since: nil, region: "lobby", type: nil, afterID: nil, limit: nil).map(\.id) == [first, second])
        #expect(try await store.events(since: nil, region: nil, type: "didEnterRegion", afterID: nil, limit: nil).map(\.id) == [first, fourth])
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: second, limit: nil).map(\.id) == [third, fourth])
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: first, limit: 2).map(\.id) == [second, third])
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: 0).isEmpty)
        #expect(try await store.events(since: 150, region: "lobby", type: "didExitRegion", afterID: first, limit: 5).map(\.id) == [second])
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: fourth, limit: nil).isEmpty)
        #expect(try await store.eventCounts() == ["didEnterRegion": 2, "didExitRegion": 1, "processStarted": 1])
    }

    /// The log's retention: by age and by count, in chunks of `limit`, oldest first; the newest
    /// event and events with a pending delivery are kept; finished deliveries go with their
    /// event; ids are never reused. The totals (events by type, failed delivery attempts) count
    /// what was pruned too: they never go back.
    static func retention(_ store: some RegionStoring) async throws {
        #expect(try await store.pruneEvents(olderThan: 100, keepingNewest: nil, limit: 10) == 0, "an empty log")
        var ids: [Int64] = []
        for time in 1...10 {
            // Event 3 has a pending delivery, event 5 a delivered one; odd times enter, even ones exit.
            let hooks = time == 3 || time == 5 ? ["webhook:h\(time)"] : []
            let type = time % 2 == 1 ? "didEnterRegion" : "didExitRegion"
            ids.append(try await store.append(time: Double(time), type: type, region: "lobby", state: "inside", reason: nil, json: "{}", hooks: hooks))
        }
        // Event 5's delivery failed twice before it went through: two failed attempts.
        let delivered = try #require(try await store.deliveries(status: .pending).first { $0.eventID == ids[4] })
        try await store.markAttemptFailed(delivered.id, error: "refused", retryAt: 5.5)
        try await store.markAttemptFailed(delivered.id, error: "refused", retryAt: 5.8)
        try await store.markDelivered(delivered.id, at: 6)
        func remaining() async throws -> [Int64] { try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).map(\.id) }
        func expectTotals(_ enter: Int, _ exit: Int, _ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            #expect(try await store.eventCounts() == ["didEnterRegion": enter, "didExitRegion": exit], comment, sourceLocation: sourceLocation)
            #expect(try await store.deliveryCounts().failedAttempts == 2, comment, sourceLocation: sourceLocation)
        }
        try await expectTotals(5, 5, "before any prune")

        #expect(try await store.pruneEvents(olderThan: nil, keepingNewest: nil, limit: 10) == 0, "no limit set: nothing pruned")
        // By age: times 1, 2, 4 and 5 (3's delivery is pending).
        #expect(try await store.pruneEvents(olderThan: 6, keepingNewest: nil, limit: 100) == 4)
        #expect(try await remaining() == [ids[2]] + Array(ids[5...]))
        #expect(try await store.deliveries(status: nil).map(\.eventID) == [ids[2]], "the delivered one went with its event")
        try await expectTotals(5, 5, "after a prune by age, with a delivery's failed attempts")
        // By count, two at a time: keep the newest 2 (9 and 10); 6, 7 then 8 go, 3 stays (pending).
        #expect(try await store.pruneEvents(olderThan: nil, keepingNewest: 2, limit: 2) == 2)
        #expect(try await remaining() == [ids[2], ids[7], ids[8], ids[9]])
        #expect(try await store.pruneEvents(olderThan: nil, keepingNewest: 2, limit: 2) == 1)
        #expect(try await store.pruneEvents(olderThan: nil, keepingNewest: 2, limit: 2) == 0)
        try await expectTotals(5, 5, "after prunes by count")
        // Everything older than the future: all but the newest and the pending one.
        #expect(try await store.pruneEvents(olderThan: 1_000, keepingNewest: nil, limit: 100) == 1)
        #expect(try await remaining() == [ids[2], ids[9]])
        #expect(try await store.lastEventID() == ids[9])
        // Its delivery done, event 3 goes too; the newest stays even with keepingNewest 0.
        let pending = try #require(try await store.deliveries(status: .pending).first)
        try await store.markDelivered(pending.id, at: 11)
        #expect(try await store.pruneEvents(olderThan: 1_000, keepingNewest: 0, limit: 100) == 1)
        #expect(try await remaining() == [ids[9]])
        // Ids go on from the last one (a reader's cursor stays valid).
        let next = try await store.append(time: 11, type: "didExitRegion", region: "lobby", state: "outside", reason: nil, json: "{}", hooks: [])
        #expect(next > ids[9])
        try await expectTotals(5, 6, "an event logged after the prunes adds to its type's total")
    }

    /// One pending delivery per distinct hook, created with its event; due order, retries,
    /// failure, delivery, the counts.
    static func hookDeliveries(_ store: some RegionStoring) async throws {
        #expect(try await store.nextDeliveryTime() == nil)
        let first = try await store.append(time: 100, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}",
                                           hooks: ["command:a", "webhook:b", "command:a"])
        let second = try await store.append(time: 90, type: "didExitRegion", region: "park", state: "outside", reason: nil, json: "{}", hooks: ["webhook:b"])
        #expect(try await store.deliveries(status: nil).map(\.eventID) == [first, first, second], "a hook named twice is delivered once")
        #expect(try await store.nextDeliveryTime() == 90)
        let due = try await store.dueDeliveries(now: 100, limit: 10)
        #expect(due.map(\.eventID) == [second, first, first], "earliest due first")
        #expect(due.map(\.hook) == ["webhook:b", "command:a", "webhook:b"])
        #expect(due.allSatisfy { $0.status == .pending && $0.attempts == 0 && $0.lastError == nil && $0.deliveredAt == nil })
        #expect(try await store.dueDeliveries(now: 95, limit: 10).map(\.eventID) == [second])
        #expect(try await store.dueDeliveries(now: 100, limit: 1).count == 1)

        try await store.markDelivered(due[0].id, at: 101)
        try await store.markAttemptFailed(due[1].id, error: "exit status 3", retryAt: 130)
        try await store.markAttemptFailed(due[2].id, error: "refused", retryAt: 110)
        #expect(try await store.dueDeliveries(now: 105, limit: 10).isEmpty)
        #expect(try await store.nextDeliveryTime() == 110)
        let retried = try await store.dueDeliveries(now: 130, limit: 10)
        #expect(retried.map(\.id) == [due[2].id, due[1].id])
        #expect(retried.map(\.attempts) == [1, 1] && retried.map(\.lastError) == ["refused", "exit status 3"])
        try await store.markAttemptFailed(due[2].id, error: "refused again", retryAt: nil)
        try await store.markAttemptFailed(due[1].id, error: "exit status 3", retryAt: 140)
        try await store.markDelivered(due[1].id, at: 141)

        let delivered = try await store.deliveries(status: .delivered)
        #expect(delivered.map(\.id) == [due[1].id, due[0].id].sorted())
        #expect(delivered.first { $0.id == due[1].id }?.attempts == 3)
        #expect(delivered.first { $0.id == due[1].id }?.lastError == nil, "a delivery clears the last error")
        #expect(delivered.first { $0.id == due[0].id }?.deliveredAt == 101)
        let failed = try await store.deliveries(status: .failed)
        #expect(failed.map(\.id) == [due[2].id] && failed.first?.attempts == 2 && failed.first?.lastError == "refused again")
        #expect(try await store.nextDeliveryTime() == nil)
        let counts = try await store.deliveryCounts()
        #expect(counts.byStatus == ["delivered": 2, "failed": 1])
        // delivered: 1 − 1 and 3 − 1; failed: 2.
        #expect(counts.failedAttempts == 4)
    }

    /// A region's hooks run in log order: while a delivery of an earlier event of the region
    /// waits for its retry, the later events' deliveries of that region are not due (an exit's
    /// command used to run after the next entry's); other regions and events without one are not held.
    static func hookOrderPerRegion(_ store: some RegionStoring) async throws {
        let exit = try await store.append(time: 10, type: "didExitRegion", region: "museum", state: "outside", reason: nil, json: "{}",
                                          hooks: ["command:exit", "webhook:b"])
        let enter = try await store.append(time: 20, type: "didEnterRegion", region: "museum", state: "inside", reason: nil, json: "{}",
                                           hooks: ["command:enter"])
        let park = try await store.append(time: 20, type: "didEnterRegion", region: "park", state: "inside", reason: nil, json: "{}", hooks: ["command:enter"])
        let started = try await store.append(time: 20, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}", hooks: ["command:log"])
        let due = try await store.dueDeliveries(now: 30, limit: 10)
        #expect(due.map(\.eventID) == [exit, exit, park, started], "the museum's entry waits for its exit: \(due.map(\.eventID))")
        // The exit's command fails and waits for its retry at 60; its webhook is delivered.
        let command = try #require(due.first { $0.hook == "command:exit" })
        try await store.markAttemptFailed(command.id, error: "exit status 1", retryAt: 60)
        for delivery in due where delivery.id != command.id { try await store.markDelivered(delivery.id, at: 31) }
        #expect(try await store.dueDeliveries(now: 40, limit: 10).isEmpty, "the entry ran before the exit it follows")
        #expect(try await store.nextDeliveryTime() == 60, "not the waiting entry's time (20)")
        #expect(try await store.dueDeliveries(now: 60, limit: 10).map(\.id) == [command.id])
        try await store.markDelivered(command.id, at: 61)
        #expect(try await store.dueDeliveries(now: 61, limit: 10).map(\.eventID) == [enter])
        #expect(try await store.nextDeliveryTime() == 20)
        // A webhook that is down holds back only its own later deliveries of the region, not the commands.
        let first = try await store.append(time: 62, type: "didExitRegion", region: "park", state: "outside", reason: nil, json: "{}",
                                           hooks: ["webhook:down", "command:exit"])
        let second = try await store.append(time: 63, type: "didEnterRegion", region: "park", state: "inside", reason: nil, json: "{}",
                                            hooks: ["webhook:down", "command:enter"])
        let parkDue = try await store.dueDeliveries(now: 64, limit: 10).filter { [first, second].contains($0.eventID) }
        #expect(parkDue.map(\.hook).sorted() == ["command:exit", "webhook:down"], "\(parkDue.map(\.hook))")
        for delivery in parkDue {
            if delivery.hook == "webhook:down" { try await store.markAttemptFailed(delivery.id, error: "refused", retryAt: 600) }
            else { try await store.markDelivered(delivery.id, at: 64) }
        }
        let next = try await store.dueDeliveries(now: 65, limit: 10).filter { [first, second].contains($0.eventID) }
        #expect(next.map { "\($0.eventID) \($0.hook)" } == ["\(second) command:enter"], "the entry's command runs; its webhook waits for the exit's")
        // Given up on (failed for good), an earlier delivery holds nothing back.
        let again = try await store.append(time: 70, type: "didExitRegion", region: "museum", state: "outside", reason: nil, json: "{}", hooks: ["command:exit"])
        let entry = try #require(try await store.dueDeliveries(now: 71, limit: 10).first { $0.eventID == enter })
        try await store.markAttemptFailed(entry.id, error: "exit status 1", retryAt: nil)
        #expect(try await store.dueDeliveries(now: 71, limit: 10).filter { $0.hook.hasPrefix("command:") }.map(\.eventID).contains(again))
    }

    /// Trimming keeps the newest pending deliveries and marks the others dropped.
    static func boundedQueue(_ store: some RegionStoring) async throws {
        var ids: [Int64] = []
        for index in 0..<25 {
            ids.append(try await store.append(time: Double(index), type: "didEnterRegion", region: "r", state: nil, reason: nil, json: "{}", hooks: ["webhook:x"]))
        }
        #expect(try await store.trimPendingDeliveries(toAtMost: 30) == 0)
        #expect(try await store.trimPendingDeliveries(toAtMost: 10) == 15)
        let pending = try await store.deliveries(status: .pending)
        #expect(pending.map(\.eventID) == Array(ids.suffix(10)), "the newest are kept")
        let dropped = try await store.deliveries(status: .dropped)
        #expect(dropped.count == 15 && dropped.allSatisfy { $0.lastError == "queue full" })
        #expect(try await store.trimPendingDeliveries(toAtMost: 0) == 10)
        #expect(try await store.deliveryCounts().byStatus == ["dropped": 25])
    }

    /// A missing cursor is 0, or is created at the log's end and then stays; set moves it forward,
    /// never back (a late writer — an outputs holder that lost its lease mid-publication — cannot
    /// undo a newer holder's progress).
    static func outputCursors(_ store: some RegionStoring) async throws {
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: false) == 0)
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: true) == 0, "created at the end of an empty log")
        var last: Int64 = 0
        for index in 0..<3 { last = try await store.append(time: Double(index), type: "t", region: nil, state: nil, reason: nil, json: "{}", hooks: []) }
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: true) == 0, "an existing cursor stays where it is")
        #expect(try await store.outputCursor("mqtt:office", createAtEnd: false) == 0)
        #expect(try await store.outputCursor("mqtt:office", createAtEnd: true) == last, "a new cursor starts at the log's end")
        try await store.setOutputCursor("mqtt:home", to: last - 1)
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: false) == last - 1)
        try await store.setOutputCursor("mqtt:home", to: last)
        try await store.setOutputCursor("mqtt:home", to: last - 2)
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: false) == last, "a cursor never moves back")
        try await store.setOutputCursor("sse", to: 1)
        #expect(try await store.outputCursor("mqtt:home", createAtEnd: true) == last)
        #expect(try await store.outputCursor("sse", createAtEnd: true) == 1)
    }

    /// Rooms written with the events of a batch: the last write of each beacon wins, a departure
    /// (no scanner) removes its row, and a batch that fails writes no room either. The beacons
    /// announced to Home Assistant, per output.
    static func beaconRooms(_ store: some RegionStoring) async throws {
        #expect(try await store.beaconRooms().isEmpty)
        let (a, b) = ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1", "altbeacon:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2")
        _ = try await store.apply([
            .room(a, scanner: "kitchen", at: 1),
            .event(time: 1, type: "didChangeNearestScanner", region: nil, state: nil, reason: nil, json: "{}", hooks: []),
            .room(b, scanner: "hall", at: 2),
            .room(a, scanner: "office", at: 3),
        ])
        #expect(try await store.beaconRooms() == [a: "office", b: "hall"])
        _ = try await store.apply([.room(a, scanner: nil, at: 4), .room("never placed", scanner: nil, at: 4)])
        #expect(try await store.beaconRooms() == [b: "hall"], "a departure removes the row; one of a beacon never placed is no error")
        // (A room in a batch that fails is rolled back with it: ``batchIsAllOrNothing``.)

        // The beacons each output announced to Home Assistant: per output, each once, sorted.
        #expect(try await store.announcedBeacons("mqtt:home").isEmpty)
        try await store.addAnnouncedBeacons([b, a], output: "mqtt:home")
        try await store.addAnnouncedBeacons([a], output: "mqtt:home")
        try await store.addAnnouncedBeacons([], output: "mqtt:home")
        try await store.addAnnouncedBeacons([b], output: "mqtt:office")
        #expect(try await store.announcedBeacons("mqtt:home") == [a, b].sorted())
        #expect(try await store.announcedBeacons("mqtt:office") == [b])
        // Dismissed (the device deleted in Home Assistant): no longer announced, dismissed, per output.
        #expect(try await store.dismissedBeacons("mqtt:home").isEmpty)
        try await store.dismissAnnouncedBeacons([a, "never announced"], output: "mqtt:home")
        try await store.dismissAnnouncedBeacons([a], output: "mqtt:home")
        try await store.dismissAnnouncedBeacons([], output: "mqtt:home")
        #expect(try await store.announcedBeacons("mqtt:home") == [b])
        #expect(try await store.dismissedBeacons("mqtt:home") == [a, "never announced"].sorted())
        #expect(try await store.announcedBeacons("mqtt:office") == [b], "another output's record stays")
        #expect(try await store.dismissedBeacons("mqtt:office").isEmpty)
        // Announced again (placed anew): no longer dismissed.
        try await store.addAnnouncedBeacons([a], output: "mqtt:home")
        #expect(try await store.announcedBeacons("mqtt:home") == [a, b].sorted())
        #expect(try await store.dismissedBeacons("mqtt:home") == ["never announced"])
    }

    /// Four writers append at once while a reader follows the log with an id cursor: every id is
    /// distinct, every event is there, and the reader, which only ever asks for ids after the last
    /// one it saw, sees every event exactly once (ids become visible in increasing order).
    static func concurrentAppends(_ store: some RegionStoring) async throws {
        let writers = 4
        let perWriter = 40
        let total = writers * perWriter
        let reader = Task { () throws -> [Int64] in
            var cursor: Int64 = 0
            var seen: [Int64] = []
            let deadline = ContinuousClock.now + .seconds(60)
            while seen.count < total, ContinuousClock.now < deadline {
                let batch = try await store.events(since: nil, region: nil, type: nil, afterID: cursor, limit: 17)
                if batch.isEmpty { try await Task.sleep(for: .milliseconds(2)); continue }
                seen += batch.map(\.id)
                cursor = batch[batch.count - 1].id
            }
            return seen
        }
        let appended = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var ids: [Int64] = []
                    for index in 0..<perWriter {
                        ids.append(try await store.append(time: Double(index), type: "w\(writer)", region: "r\(writer)", state: nil, reason: nil,
                                                          json: #"{"writer":\#(writer),"index":\#(index)}"#, hooks: ["webhook:x"]))
                    }
                    return ids
                }
            }
            var all: [Int64] = []
            for try await ids in group {
                #expect(ids == ids.sorted(), "one writer's ids increase")
                all += ids
            }
            return all
        }
        #expect(Set(appended).count == total, "every id is distinct")
        let seen = try await reader.value
        #expect(seen.count == total, "the cursor reader saw \(seen.count) of \(total) events")
        #expect(Set(seen) == Set(appended), "the cursor reader skipped none and saw only logged events")
        #expect(try await store.eventCounts() == Dictionary(uniqueKeysWithValues: (0..<writers).map { ("w\($0)", perWriter) }))
        #expect(try await store.deliveries(status: .pending).count == total, "one delivery per event")
    }

    /// A batch (``RegionStoring/apply(_:)``) does what its writes do one by one, in order: regions
    /// saved and removed, a state saved, events appended with ids after the log's last one and
    /// their hook deliveries created; an empty batch writes nothing.
    static func batches(_ store: some RegionStoring) async throws {
        #expect(try await store.apply([]).isEmpty)
        let before = try await store.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: uuid, major: 3))
        let park = Region.circular(try CircularRegion(identifier: "park", latitude: 48.85, longitude: 2.35, radius: 30))
        let evidence = EventEvidence(rssi: -61, scannerID: "hall", reason: "first sighting")
        let stored = try await store.apply([
            .region(lobby, at: 10, origin: .api),
            .region(park, at: 10.5, origin: nil),
            .event(time: 11, type: "didEnterRegion", region: "lobby", state: "inside", reason: "first sighting",
                   json: #"{"évidence":"ünïcode ✓"}"#, hooks: ["webhook:b", "command:a", "webhook:b"]),
            .state("lobby", .inside, since: 11, evidence: evidence, at: 11),
            .state("park", .outside, since: 9, evidence: nil, at: 12),
            .event(time: 12, type: "didDetermineState", region: "park", state: "outside", reason: nil, json: "{}", hooks: []),
            .removeRegion("park"),
        ])
        #expect(stored.map(\.type) == ["didEnterRegion", "didDetermineState"])
        guard stored.count == 2 else { return }
        #expect(stored[0].id > before && stored[1].id > stored[0].id, "ids after the log's last, in order")
        #expect(stored[0] == StoredEvent(id: stored[0].id, time: 11, type: "didEnterRegion", region: "lobby", state: "inside",
                                         reason: "first sighting", json: #"{"évidence":"ünïcode ✓"}"#))
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil) == [
            StoredEvent(id: before, time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}"),
        ] + stored)
        #expect(try await store.lastEventID() == stored[1].id)
        let regions = try await store.storedRegions()
        #expect(regions.map(\.region) == [lobby], "park saved, then removed")
        #expect(regions.map(\.origin) == [.api] && regions.map(\.registeredAt) == [10])
        #expect(try await store.states() == ["lobby": RegionStore.StoredState(.inside, since: 11, evidence: evidence, updatedAt: 11)],
                "park's state went with the region")
        let deliveries = try await store.deliveries(status: .pending)
        #expect(deliveries.map(\.eventID) == [stored[0].id, stored[0].id], "one delivery per distinct hook")
        #expect(Set(deliveries.map(\.hook)) == ["webhook:b", "command:a"])
    }

    /// A batch whose last write the database refuses (`refuseEvents` makes it refuse events of
    /// the type it is given) writes nothing: not the region, the state or the event before it.
    static func batchIsAllOrNothing(_ store: some RegionStoring, refuseEvents: (String) async throws -> Void) async throws {
        let first = try await store.append(time: 1, type: "processStarted", region: nil, state: nil, reason: nil, json: "{}", hooks: [])
        try await refuseEvents("refusedByTheTest")
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuid: uuid))
        let error = await #expect(throws: RegionKitError.self) {
            try await store.apply([
                .region(lobby, at: 10, origin: .api),
                .state("lobby", .inside, since: 11, evidence: nil, at: 11),
                .event(time: 11, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: ["webhook:b"]),
                .room("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:1", scanner: "kitchen", at: 11),
                .event(time: 12, type: "refusedByTheTest", region: nil, state: nil, reason: nil, json: "{}", hooks: []),
            ])
        }
        #expect(error?.message.contains("write 5 of 5 (refusedByTheTest)") == true, "the failed write named: \(String(describing: error))")
        #expect(try await store.events(since: nil, region: nil, type: nil, afterID: nil, limit: nil).map(\.id) == [first])
        #expect(try await store.storedRegions().isEmpty)
        #expect(try await store.states().isEmpty)
        #expect(try await store.deliveries(status: nil).isEmpty)
        #expect(try await store.beaconRooms().isEmpty)
        // The store still works: the next batch is written.
        let next = try await store.apply([.event(time: 13, type: "didEnterRegion", region: "lobby", state: "inside", reason: nil, json: "{}", hooks: [])])
        #expect(next.count == 1 && next.first.map { $0.id > first } == true)
    }
}
