import ArgumentParser
import RegionKit

/// `--layout [FORMAT:]EXPRESSION` (repeatable), for `scan` and `monitor`: vendor beacon formats in the
/// Android Beacon Library's syntax, tried after iBeacon, AltBeacon and Eddystone. FORMAT (`ibeacon`,
/// `altbeacon`, `eddystone-uid`) is the format the layout's identities get, so regions of that
/// format match them; without it the format follows the identifiers (16+2+2 after `02 15`:
/// iBeacon; other 16+2+2: AltBeacon; 10+6: Eddystone-UID), see `BeaconLayout(tagged:)`.
struct LayoutOptions: ParsableArguments {
    @Option(name: .customLong("layout"), help: ArgumentHelp(
        "A beacon layout in the Android Beacon Library's syntax, optionally FORMAT:-prefixed (ibeacon, altbeacon, eddystone-uid), tried after iBeacon, AltBeacon and Eddystone (repeatable), e.g. m:2-3=0215,i:4-19,i:20-21,i:22-23,p:24-24 (iBeacon, any company) or altbeacon:m:2-3=1234,i:4-19,i:20-21,i:22-23,p:24-24.",
        valueName: "[format:]layout"))
    var layouts: [String] = []

    func validate() throws {
        _ = try beaconLayouts()
    }

    /// The parsed layouts; a ValidationError names the option and the term at fault.
    func beaconLayouts() throws -> [BeaconLayout] {
        var parsed: [BeaconLayout] = []
        for text in layouts {
            do { parsed.append(try BeaconLayout(tagged: text)) } catch { throw ValidationError("--layout: \(error.message)") }
        }
        return parsed
    }
}
