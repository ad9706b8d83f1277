import Testing
@testable import RegionKitGateway

/// ``ScannerStatusMessage``: the scanner from the filter's `+` level, `online`/`offline` only.
@Suite("Scanner status messages: ESPresense's room status, a Theengs gateway's will")
struct ScannerStatusMessageTests {
    static func decode(_ topic: String, _ payload: String, filter: String = "espresense/rooms/+/status",
                       scanner: String? = nil) throws(SightingMessageError) -> ScannerStatusMessage {
        try ScannerStatusMessage.decode(topic: topic, payload: Array(payload.utf8), filter: filter, scanner: scanner)
    }

    @Test("The scanner is the level at the '+'; case and surrounding whitespace do not matter")
    func read() throws {
        #expect(try Self.decode("espresense/rooms/kitchen/status", "offline") == ScannerStatusMessage(scanner: "kitchen", online: false))
        #expect(try Self.decode("espresense/rooms/kitchen/status", " Online\r\n") == ScannerStatusMessage(scanner: "kitchen", online: true))
        #expect(try Self.decode("home/OpenMQTTGateway/LWT", "offline", filter: "home/+/LWT") == ScannerStatusMessage(scanner: "OpenMQTTGateway", online: false))
        #expect(try Self.decode("home/gw/LWT", "online", filter: "home/gw/LWT", scanner: "garage") == ScannerStatusMessage(scanner: "garage", online: true),
                "the source's scanner, whatever the topic")
        // The retained status removed (a node retired: `mosquitto_pub -r -n`): nothing holds its beacons.
        #expect(try Self.decode("espresense/rooms/attic/status", "") == ScannerStatusMessage(scanner: "attic", online: true))
        #expect(try Self.decode("espresense/rooms/attic/status", " \n") == ScannerStatusMessage(scanner: "attic", online: true))
    }

    @Test("Anything else is an error naming it and the topic", arguments: [
        ("espresense/rooms/kitchen/status", "{\"status\":\"offline\"}", SightingMessageError.Kind.badStatus),
        ("espresense/rooms/kitchen/status", "offline!", .badStatus),
        ("espresense/rooms/kitchen/status", String(repeating: " ", count: 65), .tooLarge),
        ("espresense/rooms//status", "offline", .badTopic),   // an empty room level names no scanner
    ])
    func rejected(topic: String, payload: String, kind: SightingMessageError.Kind) {
        #expect(throws: SightingMessageError.self) { try Self.decode(topic, payload) }
        do { _ = try Self.decode(topic, payload) } catch {
            #expect(error.kind == kind, "\(error)")
            #expect(error.message.contains(topic), "the topic named: \(error.message)")
        }
    }

    @Test("A level that decodes to a control character or a noncharacter names no scanner (a newline forged log lines; Mosquitto refuses a noncharacter in the hub's topics)")
    func hostileNames() {
        for level in ["x%0A2026-12-04T15:00:00%2B0000 critical regionkit: FORGED", "ev%00il", "bad%EF%B7%90room"] {
            let topic = "regionkit/scanners/\(level)/status"
            do {
                let decoded = try ScannerStatusMessage.decode(topic: topic, payload: Array("offline".utf8), filter: "regionkit/scanners/+/status",
                                                              scanner: nil, encodedNames: true)
                Issue.record("accepted \(decoded)")
            } catch {
                #expect(error.kind == .badTopic && error.message.contains("is not a scanner name: it contains the"), "\(error)")
                #expect(!error.message.contains("\n") && !error.message.contains("\u{0}"), "the name quoted, escaped: \(error.message)")
            }
        }
    }

    @Test("Not UTF-8: rejected as such")
    func invalidUTF8() {
        do {
            _ = try ScannerStatusMessage.decode(topic: "espresense/rooms/kitchen/status", payload: [0x6F, 0xFF, 0x66],
                                                filter: "espresense/rooms/+/status", scanner: nil)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidUTF8)
        }
    }
}
