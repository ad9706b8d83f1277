@_exported import RegionKitCore
@_exported import RegionKitEngine
