// swift-tools-version: 6.0
import Foundation
import PackageDescription

// libFuzzer targets for RegionKit's parsers and decoders (see FUZZING.md and scripts/fuzz.sh).
// A separate package so that the root package's `swift build` / `swift test` never see
// `-sanitize=fuzzer`. Two executables hold the targets (each run picks one with REGIONKIT_FUZZ_TARGET),
// so the sanitized dependency graph is linked twice instead of once per target: RegionKitFuzz (the
// parsers and the engine) and RegionKitFuzzService (run configuration, MQTT, HTTP bodies: NIO,
// Hummingbird, GRDB, Yams). Build them only through scripts/fuzz.sh (`-sanitize=fuzzer,address`).
//
// SwiftPM names a path dependency after its directory (the clone's name), so it is computed here.
let rootDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let root = rootDirectory.lastPathComponent

// SwiftPM links an executable's entry point as `main` (--defsym main=<Module>_main) while
// -sanitize=fuzzer links libFuzzer whole-archive, main included: gold crashes on that (internal error
// in format_file_lineno); lld links it, keeping SwiftPM's main, which calls LLVMFuzzerRunDriver.
let lldLink: [LinkerSetting] = [.unsafeFlags(["-use-ld=lld"])]

let package = Package(
    name: "RegionKitFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        // FuzzInput (structured reading of fuzz bytes) and FuzzTarget (selection, invariant failures).
        .target(name: "FuzzSupport"),
        // Parsers and decoders outside the daemon's service layer: builds without NIO, Hummingbird,
        // GRDB and Yams, so these targets are ready first.
        .executableTarget(
            name: "RegionKitFuzz",
            dependencies: [
                "FuzzSupport",
                .product(name: "RegionKitCore", package: root),
                .product(name: "RegionKitEngine", package: root),
                .product(name: "RegionKit", package: root),
                .product(name: "RegionKitHCI", package: root),
                .product(name: "RegionKitBluetooth", package: root),
                .product(name: "RegionKitLocation", package: root),
                .product(name: "RegionKitGateway", package: root),
                .product(name: "RegionKitSimulation", package: root),
                .product(name: "RegionKitEvaluation", package: root),
            ],
            linkerSettings: lldLink
        ),
        // The run configuration, MQTT packets and HTTP request bodies.
        .executableTarget(
            name: "RegionKitFuzzService",
            dependencies: [
                "FuzzSupport",
                .product(name: "RegionKitService", package: root),
                .product(name: "RegionKitMQTT", package: root),
                .product(name: "RegionKitHTTP", package: root),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            linkerSettings: lldLink
        ),
    ],
    swiftLanguageModes: [.v6]
)
