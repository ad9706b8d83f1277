#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// H4 over a serial device (a UART controller, a USB-serial dongle, a pty):
/// the device is put in raw mode, 8 data bits, no parity, 1 stop bit (8N1),
/// at the given baud rate, optionally with RTS/CTS flow control. The opener of a
/// serial ``DescriptorTransport``.
///
/// ```swift
/// let transport = try await SerialTransport.open(path: "/dev/ttyUSB0", baudRate: 115_200)
/// try await transport.send(H4Packet(command: .reset))
/// ```
public enum SerialTransport {
    /// The baud rates termios can set.
    public static let supportedBaudRates: [Int] = [
        9_600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 500_000, 576_000, 921_600,
        1_000_000, 1_152_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000, 3_500_000, 4_000_000,
    ]

    /// Opens and configures the device. Errors name the device and the cause:
    /// `.noSuchAdapter` (no such file), `.permissionDenied` (e.g. not in the
    /// `dialout` group), `.invalidParameter` (unsupported baud rate),
    /// `.unsupported` (not a terminal device).
    public static func open(path: String, baudRate: Int = 115_200, flowControl: Bool = false) async throws(HCIError) -> DescriptorTransport {
        guard let speed = speedConstant(baudRate) else {
            throw HCIError(code: .invalidParameter, message: "serial baud rate \(baudRate) is not one of \(supportedBaudRates.map(String.init).joined(separator: ", "))")
        }
        let specification = HCITransportSpecification.serial(path: path, baudRate: baudRate)
        let name = specification.description
        return try await DescriptorTransport.open(specification, name: name, isSocket: false) { () throws(HCIError) -> Int32 in
            try openDevice(path: path, speed: speed, flowControl: flowControl, name: name)
        }
    }

    private static func openDevice(path: String, speed: speed_t, flowControl: Bool, name: String) throws(HCIError) -> Int32 {
        let descriptor = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            let cause = SystemCallError(call: "open(\(path))", errno: code)
            switch code {
            case ENOENT, ENODEV, ENXIO:
                throw HCIError(code: .noSuchAdapter, message: "\(name): no serial device at \(path)", cause: cause)
            case EACCES, EPERM:
                throw HCIError(code: .permissionDenied, message: "\(name): no permission to open \(path) (add the user to its group, often 'dialout', or run as root)", cause: cause)
            default:
                throw HCIError(code: .io, message: "\(name): cannot open \(path)", cause: cause)
            }
        }
        var options = termios()
        guard tcgetattr(descriptor, &options) == 0 else {
            let code = errno
            _ = Syscall.close(descriptor)
            throw HCIError(code: .unsupported, message: "\(name): \(path) is not a serial (terminal) device", cause: SystemCallError(call: "tcgetattr(\(path))", errno: code))
        }
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSIZE | PARENB | CSTOPB)
        options.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
        if flowControl {
            options.c_cflag |= tcflag_t(CRTSCTS)
        } else {
            options.c_cflag &= ~tcflag_t(CRTSCTS)
        }
        // VMIN 1 / VTIME 0: reads return as soon as a byte is there (we poll anyway).
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        cfsetispeed(&options, speed)
        cfsetospeed(&options, speed)
        guard tcsetattr(descriptor, TCSANOW, &options) == 0 else {
            let code = errno
            _ = Syscall.close(descriptor)
            throw HCIError(code: .io, message: "\(name): cannot configure \(path) as raw 8N1", cause: SystemCallError(call: "tcsetattr(\(path))", errno: code))
        }
        _ = tcflush(descriptor, TCIOFLUSH)
        return descriptor
    }

    static func speedConstant(_ baud: Int) -> speed_t? {
        switch baud {
        case 9_600: speed_t(B9600)
        case 19_200: speed_t(B19200)
        case 38_400: speed_t(B38400)
        case 57_600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 576_000: speed_t(B576000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_152_000: speed_t(B1152000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 2_500_000: speed_t(B2500000)
        case 3_000_000: speed_t(B3000000)
        case 3_500_000: speed_t(B3500000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }
}
