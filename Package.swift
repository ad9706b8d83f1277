// swift-tools-version: 6.0
import PackageDescription

// Dependencies point inward: RegionKitCore (pure values) <- RegionKitEngine (pure state machines)
// <- RegionKit (facade, clocks) <- RegionKitSimulation (virtual world) <- RegionKitEvaluation
// (measuring detection and distance quality). At the edges: HCI/Bluetooth, Location, Gateway
// (recordings and scanner message formats), Store (GRDB), MQTT (protocol client), Service (the
// daemon: sources, outputs, hooks, the MQTT presence hub) and regionkit (CLI wiring).
// CI's test build (scripts/test.sh with REGIONKIT_OPTIMIZED_CORE=1, which .ci/run sets): the pure
// modules the in-process tests spend most of their CPU in (property and equivalence tests against
// brute force, simulation sweeps, replays of the recordings) are compiled with -O, as a release
// build compiles them, asserts kept; everything else stays a debug build. Unset (a developer's
// build, a package depending on RegionKit) there is no flag; set, a package depending on RegionKit
// by version would refuse to build (SwiftPM allows unsafe flags only in root and local packages).
let optimizedCore: [SwiftSetting] = Context.environment["REGIONKIT_OPTIMIZED_CORE"] == "1"
    ? [.unsafeFlags(["-O", "-assert-config", "Debug"])] : []

let package = Package(
    name: "RegionKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RegionKitCore", targets: ["RegionKitCore"]),
        .library(name: "RegionKitEngine", targets: ["RegionKitEngine"]),
        .library(name: "RegionKit", targets: ["RegionKit"]),
        .library(name: "RegionKitSimulation", targets: ["RegionKitSimulation"]),
        .library(name: "RegionKitEvaluation", targets: ["RegionKitEvaluation"]),
        .library(name: "RegionKitGateway", targets: ["RegionKitGateway"]),
        .library(name: "RegionKitStore", targets: ["RegionKitStore"]),
        .library(name: "RegionKitService", targets: ["RegionKitService"]),
        .library(name: "RegionKitHCI", targets: ["RegionKitHCI"]),
        // Test doubles for users' tests (like NIOEmbedded): an in-memory HCI controller.
        .library(name: "RegionKitHCITesting", targets: ["RegionKitHCITesting"]),
        .library(name: "RegionKitBluetooth", targets: ["RegionKitBluetooth"]),
        .library(name: "RegionKitLocation", targets: ["RegionKitLocation"]),
        .library(name: "RegionKitHTTP", targets: ["RegionKitHTTP"]),
        .library(name: "RegionKitMQTT", targets: ["RegionKitMQTT"]),
        .library(name: "RegionKitPostgres", targets: ["RegionKitPostgres"]),
        .executable(name: "regionkit", targets: ["regionkit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),   // 2.4.1: label values escaped (scanner names are untrusted)
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // One lock type that ThreadSanitizer can see (see LockedBox), for every module with shared state.
        .target(name: "RegionKitConcurrency"),
        .target(name: "RegionKitCore", dependencies: ["RegionKitConcurrency"], swiftSettings: optimizedCore),
        .target(name: "RegionKitEngine", dependencies: ["RegionKitCore"], swiftSettings: optimizedCore),
        .target(name: "RegionKit", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitEngine"], swiftSettings: optimizedCore),
        .target(name: "RegionKitSimulation", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit"], swiftSettings: optimizedCore),
        // Offline measurement: distance models against labelled RSSI, detection quality on gateway
        // recordings (ground truth as data) and in seeded simulation sweeps.
        .target(
            name: "RegionKitEvaluation",
            dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation"],
            swiftSettings: optimizedCore
        ),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "RegionKitGateway", dependencies: ["RegionKitCore", "CZlib"], swiftSettings: optimizedCore),
        .target(name: "RegionKitHCI", dependencies: ["RegionKitConcurrency"]),
        .target(name: "RegionKitHCITesting", dependencies: ["RegionKitConcurrency", "RegionKitHCI"]),
        // Helpers only the test targets use: loopback peers, the Bumble harness, a fake gpsd, a
        // private Mosquitto, the tool runner (tshark, btmon), the shared fixtures, test tags. Not a product.
        .target(name: "RegionKitTestSupport", dependencies: ["RegionKitConcurrency", .product(name: "Logging", package: "swift-log")], path: "Tests/RegionKitTestSupport"),
        .target(name: "RegionKitLocation", dependencies: ["RegionKitCore"]),
        // MQTT 3.1.1 client on SwiftNIO; depends on no other RegionKit module but the lock.
        .target(name: "RegionKitMQTT", dependencies: [
            "RegionKitConcurrency",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "RegionKitBluetooth", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitHCI", "RegionKit"]),
        // The only module importing GRDB.
        .target(name: "RegionKitStore", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit", .product(name: "GRDB", package: "GRDB.swift")]),
        // The shared store of a cluster: the store protocol on PostgreSQL (the only module importing PostgresNIO).
        .target(name: "RegionKitPostgres", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKitStore",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "RegionKitService", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitStore",
            // The daemon's edge: the sources it feeds from and the broker it talks to.
            "RegionKitSimulation", "RegionKitGateway", "RegionKitBluetooth", "RegionKitLocation", "RegionKitMQTT",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Yams", package: "Yams"),
        ]),
        // HTTP API, dashboard and metrics for the daemon (the only module importing Hummingbird).
        .target(name: "RegionKitHTTP", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitStore", "RegionKitService",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            // HTTPRequestPart: what a handler after Hummingbird's HTTP/1 codec sees (RequestReadTimeout).
            .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
            // HTTPParserError: a malformed chunked body is the client's fault (400), not the daemon's (500).
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .executableTarget(
            name: "regionkit",
            dependencies: [
                "RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation", "RegionKitEvaluation",
                "RegionKitGateway", "RegionKitStore", "RegionKitService", "RegionKitHTTP", "RegionKitBluetooth", "RegionKitLocation",
                "RegionKitMQTT", "RegionKitPostgres",
                "RegionKitHCITesting", // bench latency runs the host stack over the in-memory controller
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "RegionKitCoreTests", dependencies: ["RegionKitCore"]),
        .testTarget(name: "RegionKitEngineTests", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitSimulationTests", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitEvaluationTests", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation", "RegionKitGateway", "RegionKitEvaluation", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitGatewayTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKit", "RegionKitGateway", "RegionKitSimulation", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitHCITests", dependencies: ["RegionKitConcurrency", "RegionKitHCI", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitLocationTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitLocation", "RegionKitTestSupport"]),
        .testTarget(name: "RegionKitBluetoothTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKitHCI", "RegionKit", "RegionKitBluetooth", "RegionKitSimulation", "RegionKitGateway", "RegionKitHCITesting", "RegionKitTestSupport"]),
        // GRDB directly: the tests write foreign databases and rows of the wrong type.
        .testTarget(name: "RegionKitStoreTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "RegionKit", "RegionKitStore", "RegionKitTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "RegionKitServiceTests", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKit", "RegionKitStore", "RegionKitService", "RegionKitSimulation", "RegionKitGateway", "RegionKitMQTT",
            "RegionKitPostgres", "RegionKitTestSupport",
            // GRDB directly: a second connection puts a refusing trigger in a store under test.
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "RegionKitHTTPTests", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKit", "RegionKitStore", "RegionKitService", "RegionKitHTTP", "RegionKitTestSupport",
            // The API in cluster mode: a real PostgreSQL store and a broker feeding the partitions.
            "RegionKitPostgres", "RegionKitMQTT",
            // Not HummingbirdTesting: the tests speak HTTP over loopback themselves (LoopbackClient),
            // and it would add AsyncHTTPClient with NIOHTTP2 and more to every build (≈ 250 units).
        ]),
        .testTarget(name: "RegionKitMQTTTests", dependencies: [
            "RegionKitConcurrency", "RegionKitMQTT", "RegionKitTestSupport",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // One conformance suite for every RegionStoring: SQLite in-process, PostgreSQL in a private cluster.
        .testTarget(name: "RegionKitPostgresTests", dependencies: [
            "RegionKitConcurrency", "RegionKitCore", "RegionKitEngine", "RegionKitStore", "RegionKitPostgres", "RegionKitTestSupport",
            // GRDB directly: a second connection puts a refusing trigger in the SQLite store under test.
            .product(name: "GRDB", package: "GRDB.swift"),
        ]),
        .testTarget(name: "regionkitTests", dependencies: ["RegionKitConcurrency", "RegionKitCore", "regionkit", "RegionKitStore", "RegionKitPostgres", "RegionKitMQTT", "RegionKitTestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
    ],
    swiftLanguageModes: [.v6]
)
