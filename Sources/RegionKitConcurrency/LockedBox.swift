#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value that threads share, guarded by a POSIX mutex: RegionKit's one lock type.
///
/// Why not `Synchronization.Mutex`: on Linux its lock and unlock run inside the standard
/// library's precompiled Synchronization module, which ThreadSanitizer does not instrument, so
/// every correctly locked access that two threads make is reported as a data race (a two-thread
/// counter behind `Mutex` is enough, Swift 6.3.1). `pthread_mutex_lock` and `unlock` are
/// intercepted by the sanitizer, so it sees the happens-before edges of this lock and its
/// reports about RegionKit's shared state mean something. Uncontended, both cost one atomic
/// operation each way. The value may be noncopyable (a state holding continuations).
///
/// ```swift
/// let seen = LockedBox<[String]>([])
/// handler = { line in seen.withLock { $0.append(line) } }
/// let count = seen.withLock { $0.count }
/// ```
public final class LockedBox<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: consuming Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Fails only without memory for the mutex's bookkeeping (there is none for the default kind).
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value. Not reentrant: `body` must not call
    /// `withLock` on the same box.
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
