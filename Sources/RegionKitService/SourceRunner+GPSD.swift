import RegionKit

extension SourceRunner {
    /// Follows gpsd (default 127.0.0.1:2947) until cancelled; see ``GPSDFeed``.
    func runGPSD(_ settings: ServiceSource.GPSD) async {
        await GPSDFeed.run(host: settings.host ?? "127.0.0.1", port: settings.port ?? 2947, into: manager, activity: activity, logger: logger) { status in
            report(status, for: .circular)
        }
    }
}
