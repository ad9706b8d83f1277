import ArgumentParser
import RegionKitBluetooth

extension ScanningMode: ExpressibleByArgument {}
