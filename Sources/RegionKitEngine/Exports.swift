@_exported import RegionKitCore
