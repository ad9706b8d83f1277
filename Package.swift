// swift-tools-version: 6.0
import PackageDescription

// Dependencies point inward: RegionKitCore (pure values) <- RegionKitEngine (pure state machines)
// <- RegionKit (facade, clocks) <- RegionKitSimulation (virtual world) <- regionkit (CLI wiring).
let package = Package(
    name: "RegionKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "RegionKitCore", targets: ["RegionKitCore"]),
        .library(name: "RegionKitEngine", targets: ["RegionKitEngine"]),
        .library(name: "RegionKit", targets: ["RegionKit"]),
        .library(name: "RegionKitSimulation", targets: ["RegionKitSimulation"]),
        .library(name: "RegionKitGateway", targets: ["RegionKitGateway"]),
        .library(name: "RegionKitHCI", targets: ["RegionKitHCI"]),
        .executable(name: "regionkit", targets: ["regionkit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .target(name: "RegionKitCore"),
        .target(name: "RegionKitEngine", dependencies: ["RegionKitCore"]),
        .target(name: "RegionKit", dependencies: ["RegionKitCore", "RegionKitEngine"]),
        .target(name: "RegionKitSimulation", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit"]),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(name: "RegionKitGateway", dependencies: ["RegionKitCore", "CZlib"]),
        .target(name: "RegionKitHCI"),
        .executableTarget(
            name: "regionkit",
            dependencies: [
                "RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation", "RegionKitGateway",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "RegionKitCoreTests", dependencies: ["RegionKitCore"]),
        .testTarget(name: "RegionKitEngineTests", dependencies: ["RegionKitCore", "RegionKitEngine"]),
        .testTarget(name: "RegionKitTests", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit"]),
        .testTarget(name: "RegionKitSimulationTests", dependencies: ["RegionKitCore", "RegionKitEngine", "RegionKit", "RegionKitSimulation"]),
        .testTarget(name: "RegionKitGatewayTests", dependencies: ["RegionKitCore", "RegionKit", "RegionKitGateway", "RegionKitSimulation"]),
        .testTarget(name: "RegionKitHCITests", dependencies: ["RegionKitHCI"]),
        .testTarget(name: "regionkitTests", dependencies: ["regionkit"]),
    ],
    swiftLanguageModes: [.v6]
)
