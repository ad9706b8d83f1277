import Testing
@testable import RegionKitHCI

@Suite struct HCIEventTests {
    @Test func commandCompleteForReset() throws {
        let event = try H4Packet.event(Fixtures.resetComplete)
        #expect(event == .commandComplete(numPackets: 1, opcode: .reset, returnParameters: [0x00]))
        #expect(event.commandStatusCode == .success)
        #expect(event.commandOpcode == .reset)
        #expect(H4Packet(event: event).encoded == Fixtures.resetComplete)
    }

    @Test func commandCompleteWithLEFeatures() throws {
        let event = try H4Packet.event([
            0x04, // H4: event
            0x0E, // Command Complete
            0x0C, // parameter length 12
            0x01, // Num_HCI_Command_Packets
            0x03, 0x20, // opcode 0x2003 HCI_LE_Read_Local_Supported_Features
            0x00, // status: success
            0x01, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // LE_Features: encryption (bit 0), extended advertising (bit 12)
        ])
        guard case .commandComplete(1, .leReadLocalSupportedFeatures, let returned) = event else {
            Issue.record("unexpected \(event)")
            return
        }
        let features = try LEFeatures(returnParameters: returned)
        #expect(features.contains(.extendedAdvertising))
        #expect(features.contains(.encryption))
        #expect(!features.contains(.le2MPHY))
        // A failed status and a short feature field are errors, not garbage features.
        expectHCIError(.invalidValue) { try LEFeatures(returnParameters: [0x01]) }
        expectHCIError(.truncated, offset: 1) { try LEFeatures(returnParameters: [0x00, 0x01, 0x10]) }
        expectHCIError(.truncated, offset: 0) { try LEFeatures(returnParameters: []) }
    }

    @Test func commandCompleteWithErrorStatusAndNoParameters() throws {
        let failed = try H4Packet.event([
            0x04, // H4: event
            0x0E, // Command Complete
            0x04, // parameter length 4
            0x01, // Num_HCI_Command_Packets
            0x0B, 0x20, // opcode 0x200B HCI_LE_Set_Scan_Parameters
            0x0C, // status: Command Disallowed
        ])
        #expect(failed.commandStatusCode == .commandDisallowed)
        let nop = try H4Packet.event([
            0x04, // H4: event
            0x0E, // Command Complete
            0x03, // parameter length 3
            0x01, // Num_HCI_Command_Packets
            0x00, 0x00, // opcode 0x0000: no-op (controller ready), no return parameters
        ])
        #expect(nop == .commandComplete(numPackets: 1, opcode: HCIOpcode(rawValue: 0), returnParameters: []))
        #expect(nop.commandStatusCode == nil)
    }

    @Test func commandStatus() throws {
        let event = try H4Packet.event([
            0x04, // H4: event
            0x0F, // Command Status
            0x04, // parameter length 4
            0x01, // status: Unknown HCI Command
            0x01, // Num_HCI_Command_Packets
            0x01, 0xFC, // opcode 0xFC01 (vendor)
        ])
        #expect(event == .commandStatus(status: .unknownCommand, numPackets: 1, opcode: HCIOpcode(rawValue: 0xFC01)))
        #expect(event.commandStatusCode == .unknownCommand)
        #expect(H4Packet(event: event).payload == [0x0F, 0x04, 0x01, 0x01, 0x01, 0xFC])
    }

    @Test func disconnectionCompleteAndHardwareError() throws {
        let disconnection = try H4Packet.event([
            0x04, // H4: event
            0x05, // Disconnection Complete
            0x04, // parameter length 4
            0x00, // status: success
            0x40, 0x20, // Connection_Handle 0x040 with PB/BC flag bits set (masked off)
            0x13, // reason: Remote User Terminated Connection
        ])
        #expect(disconnection == .disconnectionComplete(status: .success, connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection))
        let hardware = try H4Packet.event([
            0x04, // H4: event
            0x10, // Hardware Error
            0x01, // parameter length 1
            0x2A, // Hardware_Code
        ])
        #expect(hardware == .hardwareError(code: 0x2A))
        #expect(hardware.encoded() == [0x10, 0x01, 0x2A])
    }

    @Test func fixedSizeEventsIgnoreExtraParameters() throws {
        let event = try H4Packet.event([
            0x04, // H4: event
            0x10, // Hardware Error
            0x02, // parameter length 2
            0x07, // Hardware_Code
            0xAA, // a parameter from a later spec version: ignored
        ])
        #expect(event == .hardwareError(code: 0x07))
    }

    @Test func unknownEventsAndSubevents() throws {
        let vendor = try H4Packet.event([
            0x04, // H4: event
            0xFF, // vendor-specific event
            0x03, // parameter length 3
            0x01, 0x02, 0x03, // opaque parameters
        ])
        #expect(vendor == .unknown(code: 0xFF, parameters: [0x01, 0x02, 0x03]))
        #expect(vendor.encoded() == [0xFF, 0x03, 0x01, 0x02, 0x03])
        let connectionComplete = try H4Packet.event([
            0x04, // H4: event
            0x3E, // LE Meta
            0x02, // parameter length 2
            0x01, // subevent: LE Connection Complete (not decoded here)
            0x00, // truncated on purpose: unknown subevents are kept as bytes
        ])
        #expect(connectionComplete == .leMeta(.unknown(subevent: 0x01, parameters: [0x00])))
        #expect(connectionComplete.advertisements.isEmpty)
        let empty = try HCIEvent(decoding: [
            0x13, // Number Of Completed Packets
            0x00, // parameter length 0
        ])
        #expect(empty == .unknown(code: 0x13, parameters: []))
    }

    // MARK: Malformed headers and fixed-size events

    @Test func rejectsTruncatedHeaders() {
        expectHCIError(.truncated, offset: 0) { try HCIEvent(decoding: []) }
        expectHCIError(.truncated, offset: 1) { try HCIEvent(decoding: [0x0E]) }
    }

    @Test func rejectsParameterLengthMismatch() {
        // Declares 5 parameter bytes, carries 4.
        expectHCIError(.lengthMismatch, offset: 1) { try HCIEvent(decoding: [0x0E, 0x05, 0x01, 0x03, 0x0C, 0x00]) }
        // Declares 3, carries 4.
        expectHCIError(.lengthMismatch, offset: 1) { try HCIEvent(decoding: [0x0E, 0x03, 0x01, 0x03, 0x0C, 0x00]) }
    }

    @Test func rejectsShortFixedEvents() {
        // Command Complete without its opcode's second byte.
        expectHCIError(.truncated, offset: 3, messageContains: "Command_Opcode") {
            try HCIEvent(decoding: [
                0x0E, // Command Complete
                0x02, // parameter length 2
                0x01, // Num_HCI_Command_Packets
                0x03, // half an opcode
            ])
        }
        // Command Status with 3 of its 4 bytes.
        expectHCIError(.truncated, offset: 4) {
            try HCIEvent(decoding: [
                0x0F, // Command Status
                0x03, // parameter length 3
                0x00, // status
                0x01, // Num_HCI_Command_Packets
                0x0C, // half an opcode
            ])
        }
        // Disconnection Complete missing the reason.
        expectHCIError(.truncated, offset: 5, messageContains: "Reason") {
            try HCIEvent(decoding: [
                0x05, // Disconnection Complete
                0x03, // parameter length 3
                0x00, // status
                0x40, 0x00, // handle
            ])
        }
        // Hardware Error without its code.
        expectHCIError(.truncated, offset: 2) { try HCIEvent(decoding: [0x10, 0x00]) }
        // LE Meta without a subevent code.
        expectHCIError(.truncated, offset: 2, messageContains: "Subevent_Code") { try HCIEvent(decoding: [0x3E, 0x00]) }
    }
}
