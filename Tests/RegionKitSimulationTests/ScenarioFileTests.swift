import Foundation
import Testing
@testable import RegionKitSimulation
import RegionKit

@Suite("Scenario files and the radio model")
struct ScenarioFileTests {
    @Test("Every built-in round-trips through its JSON form and runs identically")
    func roundTrip() throws {
        for name in Scenario.builtInNames {
            let scenario = Scenario.builtIn(name)!
            let decoded = try Scenario.decode(try scenario.jsonData(), source: "\(name).json")
            #expect(decoded == scenario, "\(name)")
        }
        let original = try SimulationRunner(scenario: .twoBeacons).runInstantly()
        let reloaded = try SimulationRunner(scenario: Scenario.decode(try Scenario.twoBeacons.jsonData(), source: "x")).runInstantly()
        #expect(original == reloaded)
    }

    @Test("A minimal hand-written scenario runs")
    func minimalFile() throws {
        let json = """
        {"name": "hall", "duration": 20,
         "beacons": [{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 1, "minor": 1, "x": 0, "y": 0}],
         "path": [{"t": 0, "x": -60, "y": 0}, {"t": 10, "x": 0, "y": 1}],
         "regions": [{"identifier": "hall", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"}]}
        """
        let events = try SimulationRunner(scenario: Scenario.decode(Data(json.utf8), source: "hall.json")).runInstantly()
        #expect(events.of("didEnterRegion", "hall").count == 1)
    }

    @Test("Malformed files give errors naming the file, the field and why", arguments: [
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t": 0, "x": 0}], "regions": []}"#, "missing field 'y' at path[0]"),
        (#"{"name": "x", "duration": "long", "beacons": [], "path": [], "regions": []}"#, "duration"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [], "regions": []}"#, "path needs at least one waypoint"),
        (#"{"name": "x", "duration": -5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "duration -5.0 must be > 0"),
        (#"{"name": "x", "duration": 5, "beacons": [{"uuid": "nope", "major": 1, "minor": 1, "x": 0, "y": 0}], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "beacons[0].uuid 'nope'"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [{"identifier": "r", "uuid": "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "minor": 2}]}"#, "regions[0]"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "actions": [{"at": 1, "action": "startMonitoring", "region": "ghost"}]}"#, "unknown region 'ghost'"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "actions": [{"at": 1, "action": "explode"}]}"#, "actions[0].action"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "radio": {"pathLossExponent": 2, "shadowingSigma": 1, "lossRate": 1.5, "sensitivity": -90}}"#, "lossRate 1.5"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "profile": "android"}"#, "profile 'android'"),
        (#"{"name": "x", "duration": 5,"#, "scenario.json"),
        // Unknown keys, with their path.
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "regoins": []}"#, "unknown key 'regoins'"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0,"z":1}], "regions": []}"#, "path[0].z: unknown key 'z'"),
        // A key given twice (the decoder kept the first value silently): where, and which.
        (#"{"name": "x", "duration": 5, "duration": 50, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "scenario.json:1:30: 'duration' is given twice in one object"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "radio": {"pathLossExponent": 2, "shadowingSigma": 1, "lossRate": 0, "sensitivity": -90, "fading": 1}}"#, "radio.fading: unknown key"),
        // Huge but finite values, bounded with the limit named.
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "radio": {"pathLossExponent": 2, "shadowingSigma": 1e300, "lossRate": 0, "sensitivity": -90}}"#, "shadowingSigma 1e+300 must be within 0...50 dB"),
        (#"{"name": "x", "duration": 1e9, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "duration 1000000000.0 exceeds the maximum 604800 seconds"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [], "geo": {"latitude": 0, "longitude": 0, "fixInterval": 1e-9}}"#, "geo.fixInterval 1e-09 must be >= 0.01"),
        (#"{"name": "x", "duration": 5, "beacons": [{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 1, "minor": 1, "x": 1e300, "y": 0}], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "beacons[0] position (1e+300, 0.0) is beyond ±10000000 m"),
        (#"{"name": "x", "duration": 600000, "beacons": [{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 1, "minor": 1, "x": 0, "y": 0, "advertisingInterval": 0.02}], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "more than the maximum 5000000"),
        // Syntax errors: where, and what was expected (Foundation's decoder says only "not valid JSON").
        ("{\"name\": \"x\",\n  \"duration\": 5 \"beacons\": []}", "scenario.json:2:17: expected ',' or '}', found '\"' (a missing ','?)"),
        ("{\"name\": \"x\", \"duration\": 5, \"beacons\": [], \"path\": [{\"t\":0,\"x\":0,\"y\":0}], \"regions\": [", "scenario.json:1:88: expected a value or ']', found the end of the text (2 brackets still open)"),
        // Whole numbers their field cannot hold: Foundation's decoder said "not valid JSON" at the top level.
        (#"{"name": "x", "duration": 5, "beacons": [{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 70000, "minor": 1, "x": 0, "y": 0}], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "beacons[0].major: 70000 is not a whole number within 0...65535"),
        (#"{"name": "x", "duration": 5, "beacons": [{"uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 1, "minor": -3, "x": 0, "y": 0}], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "beacons[0].minor: -3 is not a whole number within 0...65535"),
        (#"{"name": "x", "duration": 5, "seed": -1, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "seed: -1 is not a whole number within 0...18446744073709551615"),
        (#"{"name": "x", "duration": 5, "seed": 1.5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": []}"#, "seed: 1.5 is not a whole number"),
        (#"{"name": "x", "duration": 5, "beacons": [], "path": [{"t":0,"x":0,"y":0}], "regions": [{"identifier": "b", "uuid": "E2C56DB5DFFB48D2B060D0F5A71096E0", "major": 65536}]}"#, "regions[0].major: 65536 is not a whole number within 0...65535"),
    ])
    func malformed(json: String, expected: String) {
        do {
            _ = try Scenario.decode(Data(json.utf8), source: "scenario.json")
            Issue.record("accepted: \(json)")
        } catch let error as RegionKitError {
            #expect(error.code == .malformedInput)
            #expect(error.message.hasPrefix("scenario.json:"), "\(error.message)")
            #expect(error.message.contains(expected), "\(error.message)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("The radio model's RSSI is clamped to what a receiver reports, never an overflow trap")
    func radioModelSaturates() {
        var random = SeededRandom(seed: 1)
        // Values a file can no longer give (validation bounds them), built directly.
        let loud = RadioModel(pathLossExponent: -1e300, shadowingSigma: 0, lossRate: 0, sensitivity: -100)
        #expect(loud.receive(measuredPower: -59, distance: 10, random: &random) == 20)
        let wild = RadioModel(pathLossExponent: 2, shadowingSigma: 1e300, lossRate: 0, sensitivity: -.infinity)
        for _ in 0..<100 { #expect((-127...20).contains(wild.receive(measuredPower: -59, distance: 1, random: &random) ?? -127)) }
    }

    @Test("Waypoint lookup and transmit windows: binary searches agree with the definitions")
    func positionAndWindows() {
        let path = (0..<1000).map { Scenario.Waypoint(t: Double($0), x: Double($0) * 2, y: 0) }
        let scenario = Scenario(name: "p", duration: 10, beacons: [], path: path, regions: [])
        #expect(scenario.position(at: -1) == (0, 0))
        #expect(scenario.position(at: 10.25) == (20.5, 0))
        #expect(scenario.position(at: 5000) == (1998, 0))
        let windows = Scenario.Window.merged([.init(from: 5, to: 7), .init(from: 0, to: 2), .init(from: 1, to: 3), .init(from: 3, to: 4)])
        #expect(windows == [.init(from: 0, to: 4), .init(from: 5, to: 7)])
        for t in stride(from: -1.0, through: 8, by: 0.25) {
            #expect(Scenario.Window.contains(t, in: windows) == ((0..<4).contains(t) || (5..<7).contains(t)), "t \(t)")
        }
    }

    @Test func radioModelFollowsLogDistance() {
        let radio = RadioModel(pathLossExponent: 2, shadowingSigma: 0, lossRate: 0, sensitivity: -100)
        var random = SeededRandom(seed: 1)
        #expect(radio.receive(measuredPower: -59, distance: 1, random: &random) == -59)
        #expect(radio.receive(measuredPower: -59, distance: 10, random: &random) == -79)
        #expect(radio.receive(measuredPower: -59, distance: 1000, random: &random) == nil, "-119 dBm is below the sensitivity")
    }

    @Test func lossRateAndShadowingAreHonoured() {
        let radio = RadioModel(pathLossExponent: 2, shadowingSigma: 4, lossRate: 0.3, sensitivity: -200)
        var random = SeededRandom(seed: 99)
        let samples = (0..<20_000).map { _ in radio.receive(measuredPower: -59, distance: 1, random: &random) }
        let received = samples.compactMap { $0 }
        let lossRate = 1 - Double(received.count) / Double(samples.count)
        #expect(abs(lossRate - 0.3) < 0.02)
        let mean = Double(received.reduce(0, +)) / Double(received.count)
        let sigma = (received.map { pow(Double($0) - mean, 2) }.reduce(0, +) / Double(received.count)).squareRoot()
        #expect(abs(mean - -59) < 0.2)
        #expect(abs(sigma - 4) < 0.2)
    }

    @Test func adapterOffSilencesTheWorld() throws {
        let runner = try SimulationRunner(scenario: .flakyRadio)
        let sightings = runner.timeline().compactMap { item -> Double? in
            if case .observation(let observation) = item.1 { return observation.timestamp.seconds }
            return nil
        }
        #expect(!sightings.isEmpty)
        #expect(!sightings.contains { $0 >= 20 && $0 < 23.5 })
    }

    @Test func devicePathInterpolates() {
        let scenario = Scenario.museum
        #expect(scenario.position(at: -5) == (-80, 0))
        #expect(scenario.position(at: 27.5) == (-40, 0))
        #expect(scenario.position(at: 1_000) == (120, 0))
    }

    @Test func timelineFormatterShowsWhatTheFieldAppShowed() throws {
        var formatter = TimelineFormatter()
        let lines = try SimulationRunner(scenario: .twoBeacons, profile: .coreLocation).runInstantly().compactMap { formatter.line(for: $0) }
        #expect(lines.contains { $0.contains("START  monitoring uuid-only") })
        #expect(lines.contains { $0.contains("ENTER  beacon-B") })
        #expect(lines.contains { $0.contains("EXIT   beacon-A") && $0.contains("threshold 30 s") })
    }
}
