// RegionKitBluetooth's API speaks in HCI values (transports, packets, advertisements) and
// RegionKit values (LocationManager, clocks, observations): re-export both for its users.
@_exported import RegionKit
@_exported import RegionKitHCI
