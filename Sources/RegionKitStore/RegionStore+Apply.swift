import GRDB
import RegionKitCore
import RegionKitEngine

extension RegionStore {
    /// Commits `writes` in order in one SQLite transaction (one sync of the log for all of them):
    /// all or none. Returns the stored event of every `.event` write, in order.
    ///
    /// ```swift
    /// let stored = try store.apply([.state("lobby", .inside, since: 12.5, evidence: nil, at: 12.5),
    ///                               .event(time: 12.5, type: "didEnterRegion", region: "lobby", state: "inside",
    ///                                      reason: nil, json: line, hooks: [])])
    /// ```
    public func apply(_ writes: [StoreWrite]) throws -> [StoredEvent] {
        guard !writes.isEmpty else { return [] }
        let encoded = try writes.map { try $0.jsonColumn() }
        return try write { db in
            var stored: [StoredEvent] = []
            for (index, (write, json)) in zip(writes, encoded).enumerated() {
                do {
                    try perform(write, json: json)
                } catch {
                    throw RegionKitError(.storeFailed, "store \(path): write \(index + 1) of \(writes.count) (\(write.summary)) failed; the transaction was rolled back", cause: error)
                }
            }
            return stored

            func perform(_ write: StoreWrite, json: String?) throws {
                switch write {
                case .region(let region, let time, let origin):
                    try Self.saveRegion(region, definition: json ?? "", at: time, origin: origin, in: db)
                case .removeRegion(let identifier):
                    try Self.removeRegion(identifier, in: db)
                case .state(let identifier, let state, let since, _, let time):
                    try Self.saveState(identifier, state: state, since: since, evidenceJSON: json, at: time, in: db)
                case .event(let time, let type, let region, let state, let reason, let line, let hooks):
                    let id = try Self.append(time: time, type: type, region: region, state: state, reason: reason, json: line, hooks: hooks, in: db)
                    stored.append(StoredEvent(id: id, time: time, type: type, region: region, state: state, reason: reason, json: line))
                case .room(let beacon, let scanner, let time):
                    try Self.saveRoom(beacon, scanner: scanner, at: time, in: db)
                }
            }
        }
    }
}
