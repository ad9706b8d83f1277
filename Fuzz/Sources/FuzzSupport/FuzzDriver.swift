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

/// Runs libFuzzer with the process's arguments. SwiftPM gives an executable its own `main` (it
/// links the module's entry point as `main`), so libFuzzer's `main` is not used: the executable's
/// `main.swift` calls this instead.
///
/// ```swift
/// runFuzzer { data, size in selected.run(Array(UnsafeBufferPointer(start: data, count: size))); return 0 }
/// ```
public func runFuzzer(_ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}
