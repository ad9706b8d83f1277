import Foundation
import RegionKitCore
import RegionKitGateway
import RegionKitMQTT

/// The `cluster:` block of a `regionkit run` configuration: this engine is one member of a cluster
/// that shares a PostgreSQL store and takes partitions of the beacon sightings through leases (see
/// ``ClusterEngine`` and docs/cluster.md).
///
/// ```yaml
/// store: postgres://regionkit@db:5432/regionkit
/// mqtt: {urls: ["mqtt://nats-1:1883", "mqtt://nats-2:1883", "mqtt://nats-3:1883"], site: airport, keepAlive: 10}
/// sources: [{mqtt: {format: espresense}}]
/// cluster: {partitions: 16, member: engine-a, leaseSeconds: 5}
/// ```
public struct ClusterConfiguration: Codable, Sendable, Hashable {
    /// How many partitions the broker's mapping makes, `{{partition(N, …)}}` (default 16).
    public var partitions: Int?
    /// This engine's name among the members (default `<host>-<pid>`); unique in the cluster.
    public var member: String?
    /// How long a lease lasts without renewal, seconds (default 5; renewed every third of it): an
    /// engine that dies gives its partitions up after at most this.
    public var leaseSeconds: Double?
    /// A partition's MQTT topic filter, with `{partition}` for its number (default
    /// `regionkit/part/{partition}/espresense/devices/+/+`).
    public var topic: String?
    /// Where the ESPresense nodes say whether they are online, read by every partition (their
    /// beacons hash to any partition): a topic filter whose `+` level names the room (default
    /// `espresense/rooms/+/status`, which the broker does not partition); `none`: not read. See
    /// ``MQTTSourceConfiguration/status``.
    public var status: String?

    public init(partitions: Int? = nil, member: String? = nil, leaseSeconds: Double? = nil, topic: String? = nil, status: String? = nil) {
        self.partitions = partitions
        self.member = member
        self.leaseSeconds = leaseSeconds
        self.topic = topic
        self.status = status
    }

    /// The nodes' status filter every partition reads (``status``), or nil when none is.
    public var statusFilter: String? {
        guard let status else { return SightingMessageFormat.espresense.defaultStatusFilter }
        return status == MQTTSourceConfiguration.noStatus ? nil : status
    }

    public static let defaultTopic = "regionkit/part/{partition}/espresense/devices/+/+"

    public var partitionCount: Int { partitions ?? 16 }
    public var leaseDuration: Double { leaseSeconds ?? 5 }
    public var topicTemplate: String { topic ?? Self.defaultTopic }

    /// The member name: the configured one, else `<host>-<pid>`.
    public var memberName: String {
        member ?? "\(ProcessInfo.processInfo.hostName)-\(ProcessInfo.processInfo.processIdentifier)"
    }

    /// The topic filter of `partition`.
    public func topicFilter(partition: Int) -> String {
        topicTemplate.replacingOccurrences(of: "{partition}", with: String(partition))
    }

    /// Why the block cannot be used (naming the field), or nil.
    public var problem: String? {
        if let partitions, !(1...65_536).contains(partitions) { return "partitions \(partitions) must be within 1...65536" }
        if let leaseSeconds, !(leaseSeconds.isFinite && (1...600).contains(leaseSeconds)) {
            return "leaseSeconds \(leaseSeconds) must be within 1...600 seconds"
        }
        if let member {
            if member.isEmpty || member.utf8.count > 200 { return "member must be 1 to 200 characters" }
            if member.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return "member must not contain control characters" }
        }
        let template = topicTemplate
        guard template.components(separatedBy: "{partition}").count == 2 else {
            return "topic '\(template)' must contain {partition} exactly once"
        }
        do { try MQTTTopicFilter.validateFilter(topicFilter(partition: 0)) } catch { return "topic '\(template)': \(error)" }
        if let problem = MQTTSourceConfiguration.statusProblem(statusFilter, scanner: nil) { return problem }
        return nil
    }
}
