import GRDB

extension RegionStore {
    /// Records where `beacon` (its identity's `description`) is placed from `time` on: `scanner`,
    /// or nowhere (the row removed). See ``StoreWrite/room(_:scanner:at:)``.
    public func saveRoom(_ beacon: String, scanner: String?, at time: Double) throws {
        try write { db in try Self.saveRoom(beacon, scanner: scanner, at: time, in: db) }
    }

    static func saveRoom(_ beacon: String, scanner: String?, at time: Double, in db: Database) throws {
        if let scanner {
            try db.execute(sql: """
                INSERT INTO beacon_room (beacon, scanner, updated_at) VALUES (?, ?, ?)
                ON CONFLICT(beacon) DO UPDATE SET scanner = excluded.scanner, updated_at = excluded.updated_at
                """, arguments: [beacon, scanner, time])
        } else {
            try db.execute(sql: "DELETE FROM beacon_room WHERE beacon = ?", arguments: [beacon])
        }
    }

    /// The room each placed beacon is in (see ``RegionStoring/beaconRooms()``).
    ///
    /// ```swift
    /// try store.saveRoom("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2", scanner: "kitchen", at: 12)
    /// try store.beaconRooms()   // ["E2C56DB5-DFFB-48D2-B060-D0F5A71096E0:1:2": "kitchen"]
    /// ```
    public func beaconRooms() throws -> [String: String] {
        let rows = try read { db in try Row.fetchAll(db, sql: "SELECT rowid, beacon, scanner FROM beacon_room") }
        var rooms: [String: String] = [:]
        for row in rows {
            let beacon: String = try column(row, "beacon", of: "beacon_room")
            rooms[beacon] = try column(row, "scanner", of: "beacon_room") as String
        }
        return rooms
    }
}
