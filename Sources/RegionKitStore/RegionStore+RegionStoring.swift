/// The SQLite store is the single-machine ``RegionStoring``: its synchronous methods satisfy the
/// protocol's `async` requirements as they are.
///
/// ```swift
/// let store: any RegionStoring = try RegionStore(path: RegionStore.defaultPath())
/// ```
extension RegionStore: RegionStoring {}
