import Foundation
import Testing
@testable import RegionKitCore

/// A device that is no beacon (a phone an ESPresense node resolved by its IRK, an address, an
/// ESPresense alias), kept in the identity's 20 bytes so its id comes back whole.
@Suite("Device identities: phones, watches and trackers by the id their scanner gives them")
struct DeviceIdentityTests {
    static let irk = "irk:0123456789abcdef0123456789abcdef"

    @Test("An alias is kept as its bytes, padded with zeros (byte level)")
    func aliasBytes() throws {
        let identity = try #require(BeaconIdentity(deviceID: "alice-phone"))
        #expect(identity.format == .device)
        // uuid: the id's 11 ASCII bytes, then 5 zeros of padding
        #expect(identity.uuidBytes == Array("alice-phone".utf8) + [0, 0, 0, 0, 0])
        // major and minor: the id's bytes 16...19, all padding here
        #expect(identity.major == 0 && identity.minor == 0)
        #expect(identity.deviceID == "alice-phone" && identity.description == "device:alice-phone")
        // Exactly 20 bytes: the last four in major and minor, big-endian.
        let full = try #require(BeaconIdentity(deviceID: "0123456789abcdefWXYZ"))
        #expect(full.major == 0x5758 && full.minor == 0x595A)   // "WX", "YZ"
        #expect(full.deviceID == "0123456789abcdefWXYZ")
    }

    @Test("An irk: id is its 16 key bytes, major and minor 0xFFFF; the prefix and hex digits in any case")
    func irkBytes() throws {
        let identity = try #require(BeaconIdentity(deviceID: "IRK:0123456789ABCDEF0123456789abcdef"))
        // uuid: the key
        #expect(identity.uuidBytes == [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF])
        // major, minor: the marker no id kept as text can have (UTF-8 has no byte 0xFF)
        #expect(identity.major == 0xFFFF && identity.minor == 0xFFFF)
        #expect(identity.deviceID == Self.irk)
        #expect(BeaconIdentity(deviceID: Self.irk) == identity)
        // Not 32 hex digits: an irk: id of 36 bytes that is no key is too long to be kept as text.
        #expect(BeaconIdentity(deviceID: "irk:0123456789abcdef0123456789abcdeg") == nil)
        // A short text that starts with irk: is an alias like any other.
        #expect(BeaconIdentity(deviceID: "irk:abc")?.deviceID == "irk:abc")
    }

    @Test("An address in any of its forms is one device: ESPresense's 12 digits and known:, Theengs' XX:XX:…, any case")
    func addressForms() throws {
        let forms = ["c80f104dc7eb", "C80F104DC7EB", "known:c80f104dc7eb", "KNOWN:C80F104DC7EB", "c8:0f:10:4d:c7:eb", "C8:0F:10:4D:C7:EB"]
        let identities = forms.map { BeaconIdentity(deviceID: $0) }
        #expect(Set(identities).count == 1)
        let identity = try #require(identities[0])
        #expect(identity.deviceID == "C8:0F:10:4D:C7:EB" && identity.deviceAddress == "C8:0F:10:4D:C7:EB")
        #expect(BeaconIdentity(deviceID: "alice-phone")?.deviceAddress == nil)
        // Not an address: a digit that is no hex digit, a colon out of place.
        #expect(BeaconIdentity(deviceID: "c80f104dc7eg")?.deviceAddress == nil)
        #expect(BeaconIdentity(deviceID: "C8:0F:10:4D:C7E:B")?.deviceAddress == nil)
        // tile:<address> is ESPresense's tracker id, not an address: kept as it is.
        #expect(BeaconIdentity(deviceID: "tile:c80f104dc7eb")?.deviceID == "tile:c80f104dc7eb")
    }

    @Test("What cannot be a device id is refused: empty, longer than 20 bytes, space, '/', '+', '#', control and non-ASCII bytes", arguments: [
        "", "a-device-id-of-21-byt", "tractive:c80f104dc7eb", "alice phone", "a/b", "a+b", "a#b", "tab\there", "Küche", "\u{7F}",
    ])
    func refused(id: String) {
        #expect(BeaconIdentity(deviceID: id) == nil)
        #expect(throws: RegionKitError.self) { try BeaconIdentityConstraint(device: id) }
    }

    @Test("A device is told apart from every beacon and from the other device forms")
    func distinct() throws {
        let alias = try #require(BeaconIdentity(deviceID: "alice"))
        let iBeacon = BeaconIdentity(uuid: alias.uuid, major: alias.major, minor: alias.minor)
        #expect(alias != iBeacon && alias.hashValue != iBeacon.hashValue)
        #expect(BeaconIdentity(deviceID: Self.irk) != BeaconIdentity(deviceID: "irk:0123456789abcde"))
    }

    @Test("description, JSON and the constraint read back; a constraint matches its device only")
    func roundTrips() throws {
        for id in [Self.irk, "alice-phone", "C8:0F:10:4D:C7:EB", "name:pixel-7", "!\"$%&'()*,-.:;<=>?@["] {
            let identity = try #require(BeaconIdentity(deviceID: id), "\(id)")
            #expect(identity.deviceID == id)
            #expect(BeaconIdentity(description: identity.description) == identity)
            let json = try JSONEncoder().encode(identity)
            #expect(try JSONDecoder().decode(BeaconIdentity.self, from: json) == identity)
            let constraint = try BeaconIdentityConstraint(device: id)
            #expect(constraint.matches(identity) && constraint.deviceID == id && constraint.description == "device:" + id)
            #expect(try JSONDecoder().decode(BeaconIdentityConstraint.self, from: JSONEncoder().encode(constraint)) == constraint)
        }
        let json = String(decoding: try JSONEncoder().encode(try #require(BeaconIdentity(deviceID: "alice"))), as: UTF8.self)
        #expect(json == #"{"device":"alice","format":"device"}"# || json == #"{"format":"device","device":"alice"}"#)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(BeaconIdentity.self, from: Data(#"{"format":"device","device":"a b"}"#.utf8)) }
        let phone = try BeaconIdentityConstraint(device: "alice")
        #expect(!phone.matches(try #require(BeaconIdentity(deviceID: "alice2"))))
        #expect(!phone.matches(BeaconIdentity(uuid: phone.uuid, major: 0, minor: 0)))
        #expect(throws: RegionKitError.self) { try BeaconIdentityConstraint(uuid: phone.uuid, major: 0, minor: 0, format: .device) }
    }

    @Test("The command line's ID:device:DEVICE, with colons in the id and a scanner after '@'")
    func specifier() throws {
        let region = try BeaconRegion(specifier: "alice:device:\(Self.irk)@kitchen")
        #expect(region.identifier == "alice" && region.scannerID == "kitchen")
        #expect(region.constraint.deviceID == Self.irk)
        #expect(try BeaconRegion(specifier: "tag:device:c8:0f:10:4d:c7:eb").constraint.deviceID == "C8:0F:10:4D:C7:EB")
        let error = #expect(throws: RegionKitError.self) { try BeaconRegion(specifier: "x:device:has space") }
        #expect(error?.message.contains("region 'x:device:has space'") == true && error?.message.contains("is not one") == true)
        #expect(throws: RegionKitError.self) { try BeaconRegion(specifier: ":device:alice") }
    }

    @Test("A layout cannot be of format device (no frame carries a device's id)")
    func noLayout() {
        #expect(throws: RegionKitError.self) { try BeaconLayout("m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24", format: .device) }
        #expect(BeaconFormat(name: "device") == .device && BeaconFormat.device.name == "device")
    }
}
