import Foundation
import RegionKit
import RegionKitCore
import Testing

/// The fields that name a beacon in events and in the presence hub's attributes, byte for byte.
@Suite("JSONLine: a beacon's identity fields")
struct JSONLineIdentityTests {
    static let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!

    static func fields(_ identity: BeaconIdentity) -> String {
        var line = JSONLine()
        line.addIdentity(identity)
        return line.text
    }

    @Test("iBeacon without a format; AltBeacon with one; Eddystone-UID in hex; a device by its id")
    func everyFormat() throws {
        #expect(Self.fields(BeaconIdentity(uuid: Self.uuid, major: 1, minor: 65535))
                == #"{"uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":1,"minor":65535}"#)
        #expect(Self.fields(BeaconIdentity(uuid: Self.uuid, major: 7, minor: 0, format: .altBeacon))
                == #"{"format":"altbeacon","uuid":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0","major":7,"minor":0}"#)
        let uid = try #require(BeaconIdentity(eddystoneNamespace: [0x8B, 0x0C, 0xA7, 0x50, 0xE7, 0xA7, 0x4E, 0x14, 0xBD, 0x99],
                                              instance: [0, 0, 0, 0, 0, 0xA1]))
        #expect(Self.fields(uid) == #"{"format":"eddystone-uid","namespace":"8b0ca750e7a74e14bd99","instance":"0000000000a1"}"#)
        let device = try #require(BeaconIdentity(deviceID: "alice-phone"))
        #expect(Self.fields(device) == #"{"format":"device","device":"alice-phone"}"#)
    }
}
