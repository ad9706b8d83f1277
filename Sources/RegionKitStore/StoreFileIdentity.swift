#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file a path names (device and inode): a store compares the one it opened with what its
/// path names now, to notice the database deleted or replaced under a running process.
///
/// ```swift
/// let opened = StoreFileIdentity(path: path)
/// // … later
/// if StoreFileIdentity(path: path) != opened { print("deleted or replaced") }
/// ```
public struct StoreFileIdentity: Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    /// Nil when nothing is at `path` (or it cannot be examined).
    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}
