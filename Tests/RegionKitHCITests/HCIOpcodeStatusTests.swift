import Testing
@testable import RegionKitHCI

@Suite struct HCIOpcodeTests {
    @Test func splitsOGFAndOCF() {
        let opcode = HCIOpcode(rawValue: 0x200C)
        #expect(opcode.ogf == 0x08)
        #expect(opcode.ocf == 0x000C)
        #expect(opcode == .leSetScanEnable)
        #expect(HCIOpcode(ogf: 0x3F, ocf: 0x3FF).rawValue == 0xFFFF)
        // Out-of-range group bits are masked, not trapped on.
        #expect(HCIOpcode(ogf: 0xFF, ocf: 0xFFFF).rawValue == 0xFFFF)
    }

    @Test(arguments: [
        (HCIOpcode.reset, UInt16(0x0C03)),
        (.setEventMask, 0x0C01),
        (.readLocalVersionInformation, 0x1001),
        (.readBDADDR, 0x1009),
        (.leSetEventMask, 0x2001),
        (.leReadLocalSupportedFeatures, 0x2003),
        (.leSetAdvertisingParameters, 0x2006),
        (.leSetAdvertisingData, 0x2008),
        (.leSetScanResponseData, 0x2009),
        (.leSetAdvertisingEnable, 0x200A),
        (.leSetScanParameters, 0x200B),
        (.leSetScanEnable, 0x200C),
        (.leSetExtendedScanParameters, 0x2041),
        (.leSetExtendedScanEnable, 0x2042),
    ])
    func namedConstantsHaveSpecValues(opcode: HCIOpcode, raw: UInt16) {
        #expect(opcode.rawValue == raw)
        #expect(opcode.name != nil)
    }

    @Test func describesUnknownOpcodes() {
        #expect(HCIOpcode(rawValue: 0xFC01).description == "opcode 0xFC01 (OGF 0x3F, OCF 0x0001)")
        #expect(HCIOpcode.reset.description == "HCI_Reset (0x0C03)")
    }
}

@Suite struct HCIStatusTests {
    @Test(arguments: [
        (HCIStatus.success, UInt8(0x00), "Success"),
        (.unknownCommand, 0x01, "Unknown HCI Command"),
        (.unknownConnectionIdentifier, 0x02, "Unknown Connection Identifier"),
        (.hardwareFailure, 0x03, "Hardware Failure"),
        (.commandDisallowed, 0x0C, "Command Disallowed"),
        (.unsupportedFeatureOrParameterValue, 0x11, "Unsupported Feature or Parameter Value"),
        (.invalidHCICommandParameters, 0x12, "Invalid HCI Command Parameters"),
        (.remoteUserTerminatedConnection, 0x13, "Remote User Terminated Connection"),
        (.connectionTerminatedByLocalHost, 0x16, "Connection Terminated By Local Host"),
        (.unspecifiedError, 0x1F, "Unspecified Error"),
        (.controllerBusy, 0x3A, "Controller Busy"),
        (.unknownAdvertisingIdentifier, 0x42, "Unknown Advertising Identifier"),
        (.tooEarly, 0x47, "Too Early"),
    ])
    func namedCodes(status: HCIStatus, raw: UInt8, name: String) {
        #expect(status.rawValue == raw)
        #expect(status.name == name)
        #expect(HCIStatus(rawValue: raw) == status)
    }

    @Test func everyByteHasAName() {
        for raw in UInt8.min...UInt8.max {
            let status = HCIStatus(rawValue: raw)
            #expect(!status.name.isEmpty)
        }
        #expect(HCIStatus(rawValue: 0xEE).name == "unknown status 0xEE")
        #expect(HCIStatus(rawValue: 0x2B).name == "unknown status 0x2B") // reserved
        #expect(HCIStatus.commandDisallowed.description == "Command Disallowed (0x0C)")
        #expect(HCIStatus(rawValue: 0xEE).description == "unknown status 0xEE")
        #expect(HCIStatus.success.isSuccess)
        #expect(!HCIStatus.commandDisallowed.isSuccess)
    }
}

@Suite struct BluetoothAddressTests {
    @Test func parsesAndPrintsMostSignificantFirst() throws {
        let address = try #require(BluetoothAddress("c0:ff:ee:00:00:01"))
        #expect(address.bytes == [0xC0, 0xFF, 0xEE, 0x00, 0x00, 0x01])
        #expect(address.wireBytes == [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0])
        #expect(address.description == "C0:FF:EE:00:00:01")
        #expect(BluetoothAddress(wireBytes: [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0]) == address)
        #expect(BluetoothAddress("C0-FF-EE-00-00-01") == address)
    }

    @Test(arguments: ["", "C0:FF:EE:00:00", "C0:FF:EE:00:00:01:02", "C0:FF:EE:00:00:1", "G0:FF:EE:00:00:01", "C0:FF:EE:00:00:+1"])
    func rejectsMalformedStrings(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func rejectsWrongByteCounts() {
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(wireBytes: [1, 2, 3, 4, 5, 6, 7]) == nil)
    }
}
