import Foundation
import Logging
import Testing
import RegionKit
import RegionKitCore
import RegionKitGateway
import RegionKitTestSupport
@testable import RegionKitService

/// A scanner reporting once a minute (OpenMQTTGateway's defaults) makes its beacons leave and
/// come back every cycle; the hub says so once, naming the scanner and the remedy.
@Suite("MQTT ingest: scanners that report in cycles too slow for the exit detector")
struct ScannerCycleWatchTests {
    @Test("Three short bursts each after a silence longer than the ceiling: reported once; a scanner heard all the time, or silent longer than an outage, is not")
    func watch() {
        var watch = ScannerCycleWatch(ceiling: 60)
        var reported: [Double] = []
        for cycle in 0..<8 {
            let start = Double(cycle) * 65
            // A burst: three beacons within a second.
            for offset in [0, 0.2, 0.5] { if let silence = watch.heard("omg", at: start + offset) { reported.append(silence) } }
        }
        #expect(reported.count == 1 && abs(reported[0] - 64.5) < 1e-9, "\(reported)")

        // Heard every 10 s, with 70 s silences now and then: its bursts are longer than the ceiling.
        var busy = ScannerCycleWatch(ceiling: 60)
        var time = 0.0
        var busyReports = 0
        for _ in 0..<5 {
            for _ in 0..<10 { time += 10; if busy.heard("esp", at: time) != nil { busyReports += 1 } }
            time += 70
            if busy.heard("esp", at: time) != nil { busyReports += 1 }
        }
        #expect(busyReports == 0)

        // Silences of an hour (nothing to hear at night): not a cycle.
        var quiet = ScannerCycleWatch(ceiling: 60)
        #expect((0..<6).allSatisfy { quiet.heard("hall", at: Double($0) * 3_600) == nil })
        // Under the ceiling (minimumExitSilence 150 raised it): fine.
        var raised = ScannerCycleWatch(ceiling: 150)
        #expect((0..<6).allSatisfy { raised.heard("omg", at: Double($0) * 65) == nil })
    }

    @Test("Through the ingest: a Theengs gateway reporting a beacon every 65 s is logged once as too slow, with the scanner and the remedy")
    func ingestWarns() {
        let clock = VirtualClock()
        let manager = LocationManager(profile: .responsive, clock: clock, sources: [.beacon: .authorized])
        let lines = InMemoryLogHandler.Store()
        let ingest = MQTTSightingIngest(sources: [MQTTSourceConfiguration(format: .theengs)], manager: manager,
                                        logger: Logger(label: "test") { _ in InMemoryLogHandler(store: lines) })
        let payload = Array(#"{"id":"60:87:57:4C:9B:C2","rssi":-70,"uuid":"e2c56db5dffb48d2b060d0f5a71096e0","major":1,"minor":2,"txpower":-59}"#.utf8)
        for _ in 0..<6 {
            ingest.handle(topic: "home/omg/BTtoMQTT/6087574C9BC2", payload: payload)
            clock.advance(by: 65)
        }
        #expect(ingest.statistics.sightings == 6)
        let warnings = lines.all.filter { $0.contains("slow cycles") }
        #expect(warnings.count == 1, "\(lines.all)")
        #expect(warnings.first.map { $0.contains("scanner=omg") && $0.contains("silent up to 65 s") && $0.contains("(60 s)") && $0.contains("minimumExitSilence") } == true, "\(warnings)")
        #expect(warnings.first?.contains("MQTTtoBT/config") == true, "a Theengs-format scanner: OpenMQTTGateway's command")
        // Other formats' scanners get no OpenMQTTGateway command.
        #expect(!MQTTSightingIngest.cycleRemedy(.espresense).contains("OpenMQTTGateway") && !MQTTSightingIngest.cycleRemedy(.regionkit).contains("MQTTtoBT"))
    }
}
