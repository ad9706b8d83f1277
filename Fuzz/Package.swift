// swift-tools-version: 6.0
import Foundation
import PackageDescription

// libFuzzer targets for RegionKit's parsers and decoders (see FUZZING.md and scripts/fuzz.sh).
// A separate package so that the root package's `swift build` / `swift test` never see
// `-sanitize=fuzzer`. One executable holds every target (chosen by REGIONKIT_FUZZ_TARGET): the whole
// dependency graph (NIO, Hummingbird, GRDB, Yams) is linked with sanitizers once instead of once per
// target. Build it only through scripts/fuzz.sh, which passes `-sanitize=fuzzer,address`.
//
// SwiftPM names a path dependency after its directory (the clone's name), so it is computed here.
let rootDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let root = rootDirectory.lastPathComponent

let package = Package(
    name: "RegionKitFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "RegionKitFuzz",
            dependencies: [
                .product(name: "RegionKitCore", package: root),
                .product(name: "RegionKitEngine", package: root),
                .product(name: "RegionKit", package: root),
                .product(name: "RegionKitHCI", package: root),
                .product(name: "RegionKitBluetooth", package: root),
                .product(name: "RegionKitLocation", package: root),
                .product(name: "RegionKitGateway", package: root),
                .product(name: "RegionKitSimulation", package: root),
                .product(name: "RegionKitEvaluation", package: root),
                .product(name: "RegionKitService", package: root),
                .product(name: "RegionKitMQTT", package: root),
                .product(name: "RegionKitHTTP", package: root),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
