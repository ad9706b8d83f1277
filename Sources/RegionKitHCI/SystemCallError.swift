#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call with its errno, used as the ``HCIError/cause`` of transport errors.
///
/// ```swift
/// let error = SystemCallError(call: "socket(AF_BLUETOOTH)", errno: EAFNOSUPPORT)
/// error.description   // "socket(AF_BLUETOOTH) failed: EAFNOSUPPORT (Address family not supported by protocol)"
/// ```
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call that failed, such as `"connect(127.0.0.1:9000)"`.
    public var call: String
    public var errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The symbolic errno name (`"EAFNOSUPPORT"`), or `"errno N"`.
    public var errnoName: String {
        switch errno {
        case EPERM: "EPERM"
        case ENOENT: "ENOENT"
        case EINTR: "EINTR"
        case EIO: "EIO"
        case ENXIO: "ENXIO"
        case EBADF: "EBADF"
        case EAGAIN: "EAGAIN"
        case EACCES: "EACCES"
        case EBUSY: "EBUSY"
        case ENODEV: "ENODEV"
        case EINVAL: "EINVAL"
        case ENOTTY: "ENOTTY"
        case EPIPE: "EPIPE"
        case EPROTONOSUPPORT: "EPROTONOSUPPORT"
        case EAFNOSUPPORT: "EAFNOSUPPORT"
        case EADDRINUSE: "EADDRINUSE"
        case EADDRNOTAVAIL: "EADDRNOTAVAIL"
        case ENETUNREACH: "ENETUNREACH"
        case ECONNRESET: "ECONNRESET"
        case ETIMEDOUT: "ETIMEDOUT"
        case ECONNREFUSED: "ECONNREFUSED"
        case EHOSTUNREACH: "EHOSTUNREACH"
        case EINPROGRESS: "EINPROGRESS"
        case ERFKILL: "ERFKILL"
        default: "errno \(errno)"
        }
    }

    public var description: String {
        "\(call) failed: \(errnoName) (\(String(cString: strerror(errno))))"
    }
}
