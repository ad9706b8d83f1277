import Foundation
import RegionKitConcurrency

/// Reads a pipe to its end in the background — a hook command's standard error — keeping only the
/// first `limit` bytes and discarding the rest, so the writer never blocks on a full pipe (64 KiB
/// on Linux). Reading it only after the command exited, as the hook runner once did, left a
/// command that wrote more than that blocked until its timeout killed it, and a command that
/// left a background child holding the pipe open made the reader wait for that child.
///
/// ```swift
/// let errors = Pipe()
/// process.standardError = errors
/// let drain = PipeDrain(errors.fileHandleForReading, keeping: 300)
/// try process.run()
/// // … once the process exited:
/// let text = String(decoding: await drain.finish(waitingAtMost: .seconds(1)), as: UTF8.self)
/// ```
final class PipeDrain: Sendable {
    private let handle: FileHandle
    private let kept = LockedBox<[UInt8]>([])
    private let end: AsyncStream<Void>

    init(_ handle: FileHandle, keeping limit: Int) {
        self.handle = handle
        let (end, ended) = AsyncStream<Void>.makeStream()
        self.end = end
        let kept = kept
        handle.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                ended.finish()
                return
            }
            kept.withLock { kept in
                if kept.count < limit { kept += data.prefix(limit - kept.count) }
            }
        }
    }

    /// The bytes kept, once every writer closed the pipe or `wait` passed (a writer that outlives
    /// the command — a background child — is not waited for); the read end is closed.
    func finish(waitingAtMost wait: Duration) async -> [UInt8] {
        let end = end
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in end {} }
            group.addTask { try? await Task.sleep(for: wait) }
            await group.next()
            group.cancelAll()
        }
        handle.readabilityHandler = nil
        try? handle.close()
        return kept.withLock { $0 }
    }
}
