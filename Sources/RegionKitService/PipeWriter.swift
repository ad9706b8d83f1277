#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to a pipe whose reader may be gone — a hook command's standard input: a hook need not
/// read the event JSON, and one that exits first closes the pipe. `FileHandle.write(_:)` traps on
/// the resulting `EPIPE` (two cluster engines crashed in CI on hooks that only `echo`), and where
/// `SIGPIPE` is not ignored the signal kills the process. Here the write fails with the error
/// instead: `SIGPIPE` is blocked on the writing thread for the write, and one it raised is taken
/// before the thread's signal mask is restored.
///
/// ```swift
/// if let code = PipeWriter.write(Array(json.utf8), to: pipe.fileHandleForWriting.fileDescriptor), code != EPIPE {
///     logger.warning("writing the hook's input failed: errno \(code)")
/// }
/// ```
enum PipeWriter {
    /// Writes all of `bytes` to `descriptor`; `nil` on success, else the `errno` that stopped it
    /// (`EPIPE`: the reader closed the pipe).
    static func write(_ bytes: [UInt8], to descriptor: Int32) -> Int32? {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        defer {
            // A SIGPIPE this write raised is pending on this thread: take it while it is blocked
            // (unless the caller had it blocked already, and may be waiting for one of its own).
            if sigismember(&previous, SIGPIPE) == 0 {
                var pending = sigset_t()
                sigpending(&pending)
                if sigismember(&pending, SIGPIPE) == 1 {
                    var now = timespec(tv_sec: 0, tv_nsec: 0)
                    _ = sigtimedwait(&pipeSignal, nil, &now)
                }
            }
            pthread_sigmask(SIG_SETMASK, &previous, nil)
        }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }

    private static func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
        #elseif canImport(Musl)
        Musl.write(descriptor, bytes, count)
        #else
        Darwin.write(descriptor, bytes, count)
        #endif
    }
}
