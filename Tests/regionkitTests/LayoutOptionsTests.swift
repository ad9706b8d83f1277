import Foundation
import Testing
import RegionKitCore
@testable import regionkit

/// `--layout [FORMAT:]EXPRESSION` on `scan` and `monitor`, parsed by ArgumentParser as from the
/// command line: the layouts the scanner is given, with their format, and errors naming the option.
@Suite("regionkit scan/monitor --layout")
struct LayoutOptionsTests {
    static let iBeaconLayout = "m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24"

    @Test("scan --layout: format inferred or given by a prefix, repeatable")
    func scanLayouts() throws {
        let scan = try Scan.parse(["--hci", "hci0", "--layout", Self.iBeaconLayout, "--layout", "altbeacon:" + Self.iBeaconLayout,
                                   "--layout", "m:2-3=abcd,i:4-13,i:14-19", "--layout", "m:2-3=abcd,i:4-7"])
        let layouts = try scan.layoutOptions.beaconLayouts()
        #expect(layouts.map(\.format) == [.iBeacon, .altBeacon, .eddystoneUID, nil])
        #expect(layouts.map(\.expression) == [Self.iBeaconLayout, Self.iBeaconLayout, "m:2-3=abcd,i:4-13,i:14-19", "m:2-3=abcd,i:4-7"])
    }

    @Test("monitor --layout: the same option, so vendor formats can be monitored without a configuration file")
    func monitorLayouts() throws {
        let monitor = try Monitor.parse(["--hci", "hci0", "--region", "hall:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0",
                                         "--layout", Self.iBeaconLayout, "--layout", "ibeacon:m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24"])
        #expect(try monitor.layoutOptions.beaconLayouts().map(\.format) == [.iBeacon, .iBeacon])
        #expect(try Monitor.parse(["--hci", "hci0", "--region", "hall:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"]).layoutOptions.layouts.isEmpty)
    }

    @Test(arguments: [
        (["scan", "--hci", "hci0", "--layout", "m:2-3=beac"], "--layout: beacon layout 'm:2-3=beac' has no identifier"),
        (["scan", "--hci", "hci0", "--layout", "zigbee:m:2-3=beac,i:4-7"], "--layout: beacon layout 'zigbee:m:2-3=beac,i:4-7': 'zigbee' is not a format"),
        (["scan", "--hci", "hci0", "--layout", "ibeacon:m:2-3=beac,i:4-7"], "cannot be ibeacon: its identifiers (i:) must be 16+2+2 bytes"),
        (["scan", "--hci", "hci0", "--layout", "s:0-3=0000feaa,m:4-4=00,i:5-20"], "the service UUID must be 2 bytes"),
        (["monitor", "--hci", "hci0", "--region", "hall:E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "--layout", "m:2-3=beac,q:1-1"], "--layout: beacon layout 'm:2-3=beac,q:1-1': term 2"),
        (["monitor", "--gpsd", "127.0.0.1", "--geofence", "home:52.5,13.4,100", "--layout", iBeaconLayout], "--layout needs --hci"),
    ] as [([String], String)])
    func badLayoutsAreNamed(arguments: [String], message: String) {
        let seen: String
        do {
            switch arguments[0] {
            case "scan": _ = try Scan.parse(Array(arguments.dropFirst()))
            default: _ = try Monitor.parse(Array(arguments.dropFirst()))
            }
            seen = ""
        } catch {
            seen = arguments[0] == "scan" ? Scan.message(for: error) : Monitor.message(for: error)
        }
        #expect(seen.contains(message), "\(arguments): \(seen)")
    }
}
