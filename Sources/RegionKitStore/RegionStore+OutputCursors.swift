import GRDB

extension RegionStore {
    /// The id of the last logged event that `output` has durably handed on (0: none yet).
    ///
    /// - Parameter createAtEnd: when the output has no cursor yet, create it at the log's current
    ///   end, so a newly configured output starts with the events logged from now on instead of
    ///   replaying the whole history.
    ///
    /// ```swift
    /// var cursor = try store.outputCursor("mqtt:home", createAtEnd: true)
    /// for event in try store.events(afterID: cursor, limit: 100) { publish(event); try store.setOutputCursor("mqtt:home", to: event.id) }
    /// ```
    public func outputCursor(_ output: String, createAtEnd: Bool = false) throws -> Int64 {
        try write { db in
            if let id = try Int64.fetchOne(db, sql: "SELECT event_id FROM output_cursor WHERE output = ?", arguments: [output]) {
                return id
            }
            guard createAtEnd else { return 0 }
            let end = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM event_log") ?? 0
            try db.execute(sql: "INSERT INTO output_cursor (output, event_id) VALUES (?, ?)", arguments: [output, end])
            return end
        }
    }

    /// Records that `output` has handed on every event up to `id`. The cursor only moves
    /// forward: a lower `id` (a late writer, such as an outputs holder that lost its lease while
    /// a publication was in flight) leaves it where it is.
    public func setOutputCursor(_ output: String, to id: Int64) throws {
        try write { db in
            try db.execute(sql: """
                INSERT INTO output_cursor (output, event_id) VALUES (?, ?)
                ON CONFLICT(output) DO UPDATE SET event_id = MAX(output_cursor.event_id, excluded.event_id)
                """, arguments: [output, id])
        }
    }

    /// The beacons whose Home Assistant entities `output` announced (see ``RegionStoring/announcedBeacons(_:)``).
    ///
    /// ```swift
    /// try store.addAnnouncedBeacons(["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"], output: "mqtt:home")
    /// try store.announcedBeacons("mqtt:home")   // ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"]
    /// ```
    public func announcedBeacons(_ output: String) throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT beacon FROM announced_beacon WHERE output = ? ORDER BY beacon", arguments: [output]) }
    }

    /// Records that `output` announced `beacons`' entities (no longer dismissed).
    public func addAnnouncedBeacons(_ beacons: [String], output: String) throws {
        guard !beacons.isEmpty else { return }
        try write { db in
            let add = try db.cachedStatement(sql: "INSERT INTO announced_beacon (output, beacon) VALUES (?, ?) ON CONFLICT DO NOTHING")
            let undismiss = try db.cachedStatement(sql: "DELETE FROM dismissed_beacon WHERE output = ? AND beacon = ?")
            for beacon in beacons {
                try add.execute(arguments: [output, beacon])
                try undismiss.execute(arguments: [output, beacon])
            }
        }
    }

    /// The beacons `output` no longer announces because their devices were deleted in Home
    /// Assistant (see ``RegionStoring/dismissedBeacons(_:)``).
    public func dismissedBeacons(_ output: String) throws -> [String] {
        try read { db in try String.fetchAll(db, sql: "SELECT beacon FROM dismissed_beacon WHERE output = ? ORDER BY beacon", arguments: [output]) }
    }

    /// Records that `beacons`' devices were deleted in Home Assistant (see ``RegionStoring/dismissAnnouncedBeacons(_:output:)``).
    ///
    /// ```swift
    /// try store.dismissAnnouncedBeacons(["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"], output: "mqtt:home")
    /// try store.dismissedBeacons("mqtt:home")   // ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2"]
    /// ```
    public func dismissAnnouncedBeacons(_ beacons: [String], output: String) throws {
        guard !beacons.isEmpty else { return }
        try write { db in
            let remove = try db.cachedStatement(sql: "DELETE FROM announced_beacon WHERE output = ? AND beacon = ?")
            let dismiss = try db.cachedStatement(sql: "INSERT INTO dismissed_beacon (output, beacon) VALUES (?, ?) ON CONFLICT DO NOTHING")
            for beacon in beacons {
                try remove.execute(arguments: [output, beacon])
                try dismiss.execute(arguments: [output, beacon])
            }
        }
    }
}
