import ArgumentParser
import RegionKit

/// Profile names accepted on the command line.
struct ProfileOption: ExpressibleByArgument {
    var profile: MonitoringProfile

    init?(argument: String) {
        guard let profile = MonitoringProfile.named(argument) else { return nil }
        self.profile = profile
    }

    static var allValueStrings: [String] { ["corelocation", "altbeacon", "responsive", "periodic", "cautiousprior", "evidence"] }
}
