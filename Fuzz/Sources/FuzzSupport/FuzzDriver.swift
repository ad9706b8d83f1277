#if canImport(Glibc)
import Glibc
#endif

/// libFuzzer's driver (in the runtime `-sanitize=fuzzer` links): parses libFuzzer's options from
/// the command line and calls `callback` with each input.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target libFuzzer's callback runs: set once by ``runFuzzer(targets:)`` before the driver
/// starts, read only afterwards (libFuzzer calls back on the thread that started it).
nonisolated(unsafe) private var selectedTarget: FuzzTarget?

/// Called by libFuzzer with each input (a C function pointer, so it cannot capture the target).
private let fuzzCallback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
    guard let target = selectedTarget else { return 0 }
    target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

/// Runs one input through the target named by `REGIONKIT_FUZZ_TARGET` (selected at the first
/// input): what an executable's `LLVMFuzzerTestOneInput` calls. In a debug build SwiftPM links the
/// executable's entry point under another name, so libFuzzer's own `main` runs and calls
/// `LLVMFuzzerTestOneInput` directly, without ``runFuzzer(targets:)``.
///
/// ```swift
/// @_cdecl("LLVMFuzzerTestOneInput")
/// func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt { fuzzOneInput(data, size, targets: targets) }
/// ```
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int, targets: @autoclosure () -> [FuzzTarget]) -> CInt {
    if selectedTarget == nil { selectedTarget = FuzzTarget.select(from: targets()) }
    return fuzzCallback(data, size)
}

/// Runs libFuzzer with the process's arguments on the target named by `REGIONKIT_FUZZ_TARGET`
/// (an unknown name stops with the list). SwiftPM gives an executable its own `main` (it links the
/// module's entry point as `main`), so libFuzzer's `main` is not used: each fuzz executable's
/// `main.swift` calls this with its targets.
///
/// ```swift
/// runFuzzer(targets: [FuzzTarget(name: "nmea", run: NMEAFuzz.run)])
/// ```
public func runFuzzer(targets: [FuzzTarget]) -> Never {
    selectedTarget = FuzzTarget.select(from: targets)
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzCallback))
}
