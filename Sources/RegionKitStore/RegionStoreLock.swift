import Foundation
import RegionKitCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive claim on a store for one writer process (the daemon, `bench store`): an
/// advisory `flock` on `<store>.lock`, next to the database, holding the owner's PID. A second
/// process asking for the same store gets a `RegionKitError.Code.storeFailed` error naming the
/// store and the PID that holds it. The kernel releases the lock when the process ends, however it
/// ends (`kill -9` included), so a stale lock file never blocks a restart. Readers (`regionkit
/// events`) do not take it.
///
/// ```swift
/// let lock = try RegionStoreLock(storePath: path)   // throws when another daemon runs on `path`
/// let store = try RegionStore(path: path)
/// // … run; keep `lock` alive as long as the store is written
/// ```
public final class RegionStoreLock: Sendable {
    public let storePath: String
    /// `<storePath>.lock`.
    public let lockPath: String
    private let descriptor: Int32

    public init(storePath: String) throws {
        self.storePath = storePath
        lockPath = storePath + ".lock"
        let directory = URL(fileURLWithPath: storePath).deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw RegionKitError(.storeFailed, "store \(storePath): cannot open the lock file \(lockPath): \(reason)")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.readPID(descriptor)
            close(descriptor)
            if code == EWOULDBLOCK {
                throw RegionKitError(.storeFailed, """
                    store \(storePath) is in use by another regionkit process (\(holder.map { "pid \($0)" } ?? "pid unknown"); \
                    lock file \(lockPath)): two daemons on one store would both write every event; stop it or give another --store
                    """)
            }
            throw RegionKitError(.storeFailed, "store \(storePath): cannot lock \(lockPath): \(String(cString: strerror(code)))")
        }
        self.descriptor = descriptor
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit {
        // Closing the descriptor releases the lock; the file stays (removing it would race with a
        // process that just opened it).
        close(descriptor)
    }

    /// The PID written by the holder, if readable.
    static func readPID(_ descriptor: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[0..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return Int32(text)
    }
}
