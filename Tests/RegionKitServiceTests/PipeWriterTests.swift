import Foundation
import Testing
@testable import RegionKitService

/// A hook's standard input is a pipe whose reader may be gone (the hook exits without reading
/// it). Two cluster engines crashed in CI on exactly that: `FileHandle.write(_:)` traps on EPIPE.
@Suite("Pipe writer: a closed reader is an error, never a trap or a SIGPIPE")
struct PipeWriterTests {
    /// Whether SIGPIPE is blocked on this thread.
    static func pipeSignalBlocked() -> Bool {
        var current = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &current)
        return sigismember(&current, SIGPIPE) == 1
    }

    @Test("an open reader gets every byte; the writer reports success")
    func openReader() throws {
        let pipe = Pipe()
        let bytes = Array("{\"event\":1}\n".utf8)
        #expect(PipeWriter.write(bytes, to: pipe.fileHandleForWriting.fileDescriptor) == nil)
        try pipe.fileHandleForWriting.close()
        #expect(Array(pipe.fileHandleForReading.readDataToEndOfFile()) == bytes)
    }

    @Test("a closed reader: EPIPE returned, the process not signalled, the thread's mask as before, no SIGPIPE left pending")
    func closedReader() throws {
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let blockedBefore = Self.pipeSignalBlocked()
        // Small and larger than a pipe's buffer (64 KiB): both fail at once with EPIPE.
        for size in [12, 200_000] {
            #expect(PipeWriter.write([UInt8](repeating: 0x41, count: size), to: pipe.fileHandleForWriting.fileDescriptor) == EPIPE)
        }
        #expect(Self.pipeSignalBlocked() == blockedBefore)
        var pending = sigset_t()
        sigpending(&pending)
        #expect(sigismember(&pending, SIGPIPE) == 0)
        try pipe.fileHandleForWriting.close()
    }

    @Test("a bad descriptor: EBADF, not a trap")
    func badDescriptor() {
        #expect(PipeWriter.write([1, 2, 3], to: -1) == EBADF)
    }
}
