import RegionKitBluetooth

extension BeaconScanner {
    /// True when the scanner gave up (its first start failed or reconnects ran out).
    var lastErrorIsFinal: Bool {
        if case .failed = state { return true }
        return false
    }
}
