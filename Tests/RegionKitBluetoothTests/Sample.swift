import Foundation
@testable import RegionKitBluetooth

enum Sample {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
    static let identity = BeaconIdentity(uuid: uuid, major: 1, minor: 2)
    static let beaconAddress = BluetoothAddress("C0:FF:EE:00:00:01")!
    static var iBeaconData: [UInt8] { IBeaconFrame(identity: identity, measuredPower: -59).advertisingData() }

    static func legacyReport(_ type: LEAdvertisingReport.EventType, data: [UInt8] = iBeaconData, address: BluetoothAddress = beaconAddress, rssi: Int8 = -50) -> HCIEvent {
        .leMeta(.advertisingReport([LEAdvertisingReport(eventType: type, addressType: .public, address: address, data: data, rawRSSI: rssi)]))
    }

    static func extendedReport(_ type: LEExtendedAdvertisingReport.EventType, data: [UInt8] = iBeaconData, rssi: Int8 = -50) -> HCIEvent {
        .leMeta(.extendedAdvertisingReport([LEExtendedAdvertisingReport(eventType: type, addressType: .public, address: beaconAddress, rawTXPower: 0, rawRSSI: rssi, data: data)]))
    }
}
