import RegionKitCore
import RegionKitService
import RegionKitStore

extension MonitoringService {
    /// The service's store as the SQLite store these tests give it (its synchronous API).
    var sqlite: RegionStore {
        get throws {
            guard let store = store as? RegionStore else {
                throw RegionKitError(.storeFailed, "the test service does not run on a SQLite store")
            }
            return store
        }
    }
}
