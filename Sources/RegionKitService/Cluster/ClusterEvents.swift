import RegionKit
import RegionKitCore
import RegionKitStore

/// The events a cluster logs when a region's merged state changes (the union of its partitions'
/// contributions): the crossing (`didEnterRegion` / `didExitRegion`, when the region notifies it
/// and the state was known before) and `didDetermineState`, with the JSON lines a single engine
/// writes for the same events.
///
/// ```swift
/// let rows = ClusterEvents.rows(previous: .outside, merged: .inside, region: lobby, time: 12.5, evidence: nil, hooks: hooks)
/// rows.map(\.type)   // ["didEnterRegion", "didDetermineState"]
/// ```
public enum ClusterEvents {
    public static func rows(previous: RegionState?, merged: RegionState, region: Region, time: Double, evidence: EventEvidence?,
                            hooks: HookConfiguration = HookConfiguration()) -> [ClusterEventRow] {
        var kinds: [LocationEvent.Kind] = []
        switch (previous, merged) {
        case (.outside?, .inside) where region.notifyOnEntry: kinds.append(.didEnterRegion(region))
        case (.inside?, .outside) where region.notifyOnExit: kinds.append(.didExitRegion(region))
        default: break
        }
        kinds.append(.didDetermineState(merged, region))
        return kinds.map { kind in
            let event = LocationEvent(timestamp: Timestamp(seconds: time), kind: kind, evidence: evidence)
            return ClusterEventRow(time: time, type: event.typeName, region: region.identifier, state: MonitoringService.Recorder.state(of: event),
                                   reason: evidence?.reason, json: event.jsonLine(origin: .zero), hooks: hooks.hooks(for: event.typeName))
        }
    }
}
