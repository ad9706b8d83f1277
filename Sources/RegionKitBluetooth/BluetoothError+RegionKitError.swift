import RegionKit

extension BluetoothError {
    /// Runs `body`, reporting a ``BluetoothError`` as its ``regionKitError`` — for layers (the CLI,
    /// the service) that report RegionKitErrors.
    ///
    /// ```swift
    /// try await BluetoothError.bridged { () async throws(BluetoothError) in try await scanner.start() }
    /// ```
    public static func bridged<T>(_ body: () async throws(BluetoothError) -> T) async throws -> T {
        do { return try await body() } catch { throw error.regionKitError }
    }

    /// The synchronous form of ``bridged(_:)-4t1mn``.
    public static func bridged<T>(_ body: () throws(BluetoothError) -> T) throws -> T {
        do { return try body() } catch { throw error.regionKitError }
    }
}
