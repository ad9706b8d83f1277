import Foundation
import Logging
import Testing
import RegionKit
import RegionKitStore
import RegionKitTestSupport
@testable import RegionKitService

/// During a rolling restart with changed regions, members with the old and the new definitions
/// decide regions side by side; a member left on the old configuration would go on doing so. Each
/// member records its definitions' digest with its heartbeat and names, in its log, the live
/// members whose digest differs; `GET /v1/cluster` shows every member's.
@Suite("Cluster members running different region definitions are named", .serialized, .tags(.endToEnd),
       .enabled(if: PostgresServer.isAvailable, PostgresServer.skipReason))
struct ClusterRegionDefinitionsTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    @Test("A member started with a changed region is named in the other member's log with its digest, and the store shows both digests; once it runs the same ones again, the log says so",
          .timeLimit(.minutes(2)))
    func differingMembersNamed() async throws {
        let (server, store) = try await ClusterMemberConflictTests.privateStore("definitions")
        defer { server.stop() }
        defer { Task { await store.shutdown() } }
        let lobby = Region.beacon(try BeaconRegion(identifier: "lobby", uuidString: Self.uuid, major: 1))
        let moved = Region.beacon(try BeaconRegion(identifier: "lobby", uuidString: Self.uuid, major: 2))
        let lines = InMemoryLogHandler.Store()
        let a = try ClusterMemberConflictTests.member(store, named: "engine-a", partitions: 2, lease: 30, regions: [lobby], lines: lines)
        try await a.start()
        try await a.round()
        #expect(!lines.all.contains { $0.contains("other region definitions") }, "alone, a warned: \(lines.text)")

        // b runs the changed region (the rolling restart began with it).
        let b = try ClusterMemberConflictTests.member(store, named: "engine-b", partitions: 2, lease: 30, regions: [moved])
        try await b.start()
        try await b.round()
        try await a.round()
        let own = try RegionDefinitions.digest(of: [lobby]), theirs = try RegionDefinitions.digest(of: [moved])
        #expect(own != theirs)
        let warnings = lines.all.filter { $0.contains("live members run other region definitions") }
        #expect(warnings.count == 1 && warnings[0].contains("engine-b: \(theirs)") && warnings[0].contains(own), "\(lines.text)")
        // Once: the next round with the same members says nothing more.
        try await a.round()
        #expect(lines.all.filter { $0.contains("live members run other region definitions") }.count == 1, "\(lines.text)")
        #expect(try await store.clusterStatus().members.map { "\($0.member)=\($0.regions ?? "-")" } == ["engine-a=\(own)", "engine-b=\(theirs)"])

        // b is restarted with a's definitions: a's next round says they agree again.
        await b.stop(reason: "restart")
        let b2 = try ClusterMemberConflictTests.member(store, named: "engine-b", partitions: 2, lease: 30, regions: [lobby])
        try await b2.start()
        try await b2.round()
        try await a.round()
        #expect(lines.all.contains { $0.contains("every live member runs this member's region definitions again") }, "\(lines.text)")
        #expect(try await store.clusterStatus().members.map { "\($0.member)=\($0.regions ?? "-")" } == ["engine-a=\(own)", "engine-b=\(own)"])
        await b2.stop(reason: "test")
        await a.stop(reason: "test")
    }
}
