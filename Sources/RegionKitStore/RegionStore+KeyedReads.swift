import Foundation
import GRDB
import RegionKitCore
import RegionKitEngine

extension RegionStore {
    /// How many identifiers one keyed read binds at most (SQLite's own bound is 32,766 variables
    /// since 3.32, 999 before): a longer list is read in several statements, in one transaction.
    static let keysPerStatement = 500

    /// Where each of `identifiers` came from, read by key: the regions of one page of
    /// `GET /v1/regions?limit=` read their own rows, not the whole table. An identifier with no
    /// stored region is left out; either Unicode spelling of one finds it
    /// (`Region.canonical(identifier:)`).
    ///
    /// ```swift
    /// let origins = try store.regionOrigins(of: ["lobby", "park"])   // ["lobby": .api]: park is not stored
    /// ```
    public func regionOrigins(of identifiers: [String]) throws -> [String: RegionOrigin] {
        try keyedRows("SELECT identifier, origin FROM monitored_region", identifiers) { row, origins in
            let identifier: String = try column(row, 0, "identifier", of: "monitored_region")
            let text: String = try column(row, 1, "origin", of: "monitored_region")
            origins[identifier] = RegionOrigin(rawValue: text)
        }
    }

    /// The last stored state of each of `identifiers` that has one, read by key, as
    /// ``states()`` gives it for every region.
    ///
    /// ```swift
    /// let states = try store.states(of: ["lobby", "park"])   // ["lobby": inside since 12]
    /// ```
    public func states(of identifiers: [String]) throws -> [String: StoredState] {
        let decoder = JSONDecoder()
        return try keyedRows("SELECT \(Self.stateColumns) FROM region_state", identifiers) { row, states in
            let (identifier, state) = try storedState(row: row) { _, text in try? decoder.decode(EventEvidence.self, from: Data(text.utf8)) }
            states[identifier] = state
        }
    }

    /// Runs `select` (a query without `WHERE`) for the rows whose `identifier` is one of
    /// `identifiers` (canonical, each once), ``keysPerStatement`` at a time, and folds them with `add`.
    private func keyedRows<Value>(_ select: String, _ identifiers: [String],
                                  add: (Row, inout [String: Value]) throws -> Void) throws -> [String: Value] {
        let unique = Region.canonical(identifiers: identifiers)
        guard !unique.isEmpty else { return [:] }
        return try read { db in
            var found: [String: Value] = [:]
            found.reserveCapacity(unique.count)
            var start = 0
            while start < unique.count {
                let chunk = unique[start..<min(start + Self.keysPerStatement, unique.count)]
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                for row in try Row.fetchAll(db, sql: "\(select) WHERE identifier IN (\(marks))", arguments: StatementArguments(Array(chunk))) {
                    try add(row, &found)
                }
                start += chunk.count
            }
            return found
        }
    }
}
