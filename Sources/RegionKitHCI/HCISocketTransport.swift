#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Linux kernel's raw HCI socket: `socket(AF_BLUETOOTH, SOCK_RAW, BTPROTO_HCI)`
/// bound to `hciN` on the raw channel (alongside BlueZ; needs CAP_NET_RAW) or
/// the user channel (exclusive; the adapter must be down; needs CAP_NET_ADMIN).
/// Each read returns one packet with its H4 type byte, so H4 framing applies. The
/// opener of an HCI socket ``DescriptorTransport``.
///
/// ```swift
/// do {
///     let transport = try await HCISocketTransport.open(adapter: 0, channel: .user)
/// } catch {
///     print(error) // "noBluetoothSupport: no Bluetooth support in this kernel (socket(AF_BLUETOOTH) failed: EAFNOSUPPORT)"
/// }
/// ```
public enum HCISocketTransport {
    /// The HCI socket channel to bind.
    public enum Channel: UInt16, Hashable, Sendable {
        /// HCI_CHANNEL_RAW: shared with the kernel's Bluetooth stack; an HCI filter selects packets.
        case raw = 0
        /// HCI_CHANNEL_USER: exclusive access, the kernel stack steps aside.
        case user = 1
    }

    static let afBluetooth: Int32 = 31
    static let btprotoHCI: Int32 = 1
    static let solHCI: Int32 = 0
    static let hciFilter: Int32 = 2

    /// Opens `hci<adapter>`. Errors: `.noBluetoothSupport` (EAFNOSUPPORT),
    /// `.permissionDenied` (EPERM/EACCES), `.noSuchAdapter` (ENODEV),
    /// `.io` with EBUSY when the user channel is requested on an adapter that is up.
    public static func open(adapter: UInt16, channel socketChannel: Channel = .user) async throws(HCIError) -> DescriptorTransport {
        try await DescriptorTransport.open(.hciSocket(adapter: adapter, channel: socketChannel), name: "hci\(adapter)", isSocket: true) { () throws(HCIError) -> Int32 in
            try openSocket(adapter: adapter, channel: socketChannel)
        }
    }

    static func openSocket(adapter: UInt16, channel: Channel) throws(HCIError) -> Int32 {
        let name = "hci\(adapter)"
        let descriptor = socket(afBluetooth, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), btprotoHCI)
        if descriptor < 0 {
            let code = errno
            let cause = SystemCallError(call: "socket(AF_BLUETOOTH)", errno: code)
            switch code {
            case EAFNOSUPPORT, EPROTONOSUPPORT:
                throw HCIError(code: .noBluetoothSupport, message: "no Bluetooth support in this kernel (\(cause.call) failed: \(cause.errnoName))", cause: cause)
            case EPERM, EACCES:
                throw HCIError(code: .permissionDenied, message: "\(name) needs CAP_NET_RAW (run as root or setcap cap_net_raw+ep)", cause: cause)
            default:
                throw HCIError(code: .io, message: "\(name): cannot create an HCI socket", cause: cause)
            }
        }
        // struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }
        var address: [UInt16] = [UInt16(afBluetooth), adapter, channel.rawValue]
        let bound = address.withUnsafeMutableBytes { raw in
            bind(descriptor, raw.baseAddress?.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if bound != 0 {
            let code = errno
            _ = Syscall.close(descriptor)
            let cause = SystemCallError(call: "bind(\(name))", errno: code)
            switch code {
            case ENODEV:
                throw HCIError(code: .noSuchAdapter, message: "no adapter \(name)", cause: cause)
            case EPERM, EACCES:
                let capability = channel == .user ? "CAP_NET_ADMIN" : "CAP_NET_RAW"
                throw HCIError(code: .permissionDenied, message: "\(name) needs \(capability) (run as root or setcap \(capability.lowercased())+ep)", cause: cause)
            case EBUSY, EALREADY:
                throw HCIError(code: .io, message: "\(name) is in use: the user channel needs the adapter down and unused (btmgmt --index \(adapter) power off)", cause: cause)
            default:
                throw HCIError(code: .io, message: "\(name): cannot bind the HCI socket", cause: cause)
            }
        }
        if channel == .raw {
            // struct hci_filter { uint32_t type_mask; uint32_t event_mask[2]; uint16_t opcode; } (16 bytes padded)
            var filter = [UInt8](repeating: 0, count: 16)
            filter[0] = UInt8(1 << 4) // type_mask: HCI event packets (type 0x04)
            for index in 4..<12 { filter[index] = 0xFF } // every event code
            let result = filter.withUnsafeMutableBytes { raw in
                setsockopt(descriptor, solHCI, hciFilter, raw.baseAddress, socklen_t(raw.count))
            }
            if result != 0 {
                let code = errno
                _ = Syscall.close(descriptor)
                throw HCIError(code: .io, message: "\(name): cannot set the HCI event filter", cause: SystemCallError(call: "setsockopt(SOL_HCI, HCI_FILTER)", errno: code))
            }
        }
        return descriptor
    }
}
