import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import RegionKitHCI
import RegionKitTestSupport

@Suite struct HCITransportSpecificationTests {
    @Test(arguments: [
        ("hci0", HCITransportSpecification.hciSocket(adapter: 0, channel: .user)),
        ("hci12:raw", .hciSocket(adapter: 12, channel: .raw)),
        ("hci1:user", .hciSocket(adapter: 1, channel: .user)),
        ("tcp:127.0.0.1:9000", .tcp(host: "127.0.0.1", port: 9000)),
        ("tcp:localhost:1", .tcp(host: "localhost", port: 1)),
        ("tcp:[::1]:65535", .tcp(host: "::1", port: 65535)),
        ("serial:/dev/ttyUSB0", .serial(path: "/dev/ttyUSB0", baudRate: 115_200)),
        ("serial:/dev/ttyACM1:1000000", .serial(path: "/dev/ttyACM1", baudRate: 1_000_000)),
        ("serial:/dev/serial/by-id/usb-x:y-if00", .serial(path: "/dev/serial/by-id/usb-x:y-if00", baudRate: 115_200)),
    ])
    func parsesValidSpecifications(text: String, expected: HCITransportSpecification) throws {
        #expect(try HCITransportSpecification(parsing: text) == expected)
    }

    @Test(arguments: [
        ("bluetooth0", "unknown transport 'bluetooth0'"),
        ("udp:127.0.0.1:9", "unknown transport 'udp'"),
        ("hci", "adapter number ''"),
        ("hciX", "adapter number 'X'"),
        ("hci-1", "adapter number '-1'"),
        ("hci70000", "adapter number '70000'"),
        ("hci0:monitor", "channel 'monitor'"),
        ("tcp:127.0.0.1", "port is missing"),
        ("tcp::9000", "host is empty"),
        ("tcp:127.0.0.1:0", "port '0'"),
        ("tcp:127.0.0.1:65536", "port '65536'"),
        ("tcp:127.0.0.1:http", "port 'http'"),
        ("tcp:::1:9000", "write an IPv6 address as [ADDRESS]"),
        ("tcp:[::1:9000", "closing ']'"),
        ("tcp:[::1]9000", "expected ':PORT'"),
        ("serial:", "device path is empty"),
        ("serial::115200", "device path is empty"),
        ("serial:/dev/ttyS0:12345", "baud rate '12345'"),
        ("serial:/dev/ttyS0:", "empty baud rate"),
    ])
    func rejectsWithTheBadPartNamed(text: String, fragment: String) {
        let error = expectHCIError(.invalidTransportSpecification, messageContains: fragment) {
            try HCITransportSpecification(parsing: text)
        }
        #expect(error?.message.contains("'\(text)'") == true) // the whole input is quoted too
    }

    @Test(arguments: ["hci0:user", "hci3:raw", "tcp:127.0.0.1:9000", "tcp:[::1]:9", "serial:/dev/ttyUSB0:921600"])
    func descriptionRoundTrips(text: String) throws {
        #expect(try HCITransportSpecification(parsing: text).description == text)
    }
}

@Suite struct HCISocketTransportTests {
    /// Whether this kernel has AF_BLUETOOTH, asked directly.
    static var kernelErrno: Int32 {
        let descriptor = socket(31, Int32(SOCK_RAW.rawValue), 1)
        if descriptor >= 0 {
            _ = close(descriptor)
            return 0
        }
        return errno
    }

    @Test(.enabled(if: kernelErrno == EAFNOSUPPORT, "this kernel has AF_BLUETOOTH; the no-support path cannot be exercised here"))
    func noBluetoothInThisKernel() async {
        do {
            let transport = try await HCISocketTransport.open(adapter: 0, channel: .user)
            await transport.close()
            Issue.record("opened hci0 on a kernel without AF_BLUETOOTH?")
        } catch {
            #expect(error.code == .noBluetoothSupport)
            #expect(error.message == "no Bluetooth support in this kernel (socket(AF_BLUETOOTH) failed: EAFNOSUPPORT)")
            #expect((error.cause as? SystemCallError)?.errno == EAFNOSUPPORT)
        }
        // Through the spec string too, for the raw channel.
        do {
            _ = try await HCITransportSpecification(parsing: "hci0:raw").open()
            Issue.record("expected failure")
        } catch {
            #expect(error.code == .noBluetoothSupport)
        }
    }

    @Test func errnoNamesAreSpelledOut() {
        #expect(SystemCallError(call: "socket(AF_BLUETOOTH)", errno: EAFNOSUPPORT).description.hasPrefix("socket(AF_BLUETOOTH) failed: EAFNOSUPPORT ("))
        #expect(SystemCallError(call: "bind(hci1)", errno: ENODEV).errnoName == "ENODEV")
        #expect(SystemCallError(call: "x", errno: 9999).errnoName == "errno 9999")
    }
}

@Suite(.serialized, .tags(.endToEnd)) struct TCPTransportTests {
    @Test func exchangesPacketsWithAFakeController() async throws {
        let peer = try LoopbackPeer()
        defer { peer.shutdown() }
        async let connected = TCPTransport.connect(host: "127.0.0.1", port: peer.port, timeout: .seconds(2))
        #expect(await peer.accept())
        let transport = try await connected
        try await transport.send(H4Packet(command: .reset))
        #expect(await peer.read(4) == [
            0x01, // H4: command
            0x03, 0x0C, // HCI_Reset
            0x00, // no parameters
        ])
        // The controller answers in awkward pieces: 1 byte, then the rest plus half the next packet.
        let stream = Fixtures.resetComplete + Fixtures.iBeaconLegacyReport
        peer.write(Array(stream.prefix(1)))
        try await Task.sleep(for: .milliseconds(20))
        peer.write(Array(stream[1..<20]))
        try await Task.sleep(for: .milliseconds(20))
        peer.write(Array(stream[20...]))
        // Bounded: if the packets never come, closing the transport ends the stream and the
        // expectations below fail instead of the test hanging.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(10))
            await transport.close()
        }
        defer { watchdog.cancel() }
        var iterator = transport.packets.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(try first?.event() == .commandComplete(numPackets: 1, opcode: .reset, returnParameters: [0]))
        let second = try await iterator.next()
        #expect(try second?.event().advertisements.first?.data == Fixtures.iBeaconData)
        await transport.close()
        #expect(try await iterator.next() == nil) // clean close: the stream just ends
        await transport.close() // idempotent
        do {
            try await transport.send(H4Packet(command: .reset))
            Issue.record("send after close must fail")
        } catch let error as HCIError {
            #expect(error.code == .closed)
        }
    }

    @Test func reportsAControllerThatGoesAway() async throws {
        let peer = try LoopbackPeer()
        defer { peer.shutdown() }
        async let connected = TCPTransport.connect(host: "127.0.0.1", port: peer.port)
        #expect(await peer.accept())
        let transport = try await connected
        peer.write(Fixtures.resetComplete)
        peer.dropClient()
        var received = 0
        do {
            for try await _ in transport.packets { received += 1 }
            Issue.record("the stream must fail when the peer closes")
        } catch let error as HCIError {
            #expect(error.code == .connectionClosed)
            #expect(error.message.contains("tcp:127.0.0.1:\(peer.port)"))
        }
        #expect(received == 1)
        // Writing to the dead link fails too, without killing the process with SIGPIPE.
        do {
            for _ in 0..<3 { try await transport.send(H4Packet(command: .reset)) }
            Issue.record("send to a closed peer must fail")
        } catch let error as HCIError {
            #expect(error.code == .connectionClosed || error.code == .closed)
        }
        await transport.close()
    }

    @Test func failsTheStreamOnANonH4Byte() async throws {
        let peer = try LoopbackPeer()
        defer { peer.shutdown() }
        async let connected = TCPTransport.connect(host: "127.0.0.1", port: peer.port)
        #expect(await peer.accept())
        let transport = try await connected
        peer.write(Fixtures.resetComplete + [0x7E, 0x00]) // 0x7E at stream offset 7: not H4
        var received = 0
        do {
            for try await _ in transport.packets { received += 1 }
            Issue.record("expected an H4 framing error")
        } catch let error as HCIError {
            #expect(error.code == .unknownPacketType)
            #expect(error.offset == 7)
        }
        #expect(received == 1)
        await transport.close()
    }

    @Test func droppingATransportWithoutCloseReleasesTheConnection() async throws {
        let peer = try LoopbackPeer()
        defer { peer.shutdown() }
        let port = peer.port
        let connecting = Task { () -> Bool in
            // The transport lives only inside this task; nothing keeps it once the task returns.
            let transport = try await TCPTransport.connect(host: "127.0.0.1", port: port)
            return transport.specification == .tcp(host: "127.0.0.1", port: port) && transport.name == "tcp:127.0.0.1:\(port)"
        }
        #expect(await peer.accept())
        #expect(try await connecting.value)
        let start = ContinuousClock.now
        #expect(await peer.read(1, timeoutMilliseconds: 3_000).isEmpty)
        #expect(ContinuousClock.now - start < .seconds(2)) // the peer saw EOF, it did not wait for the timeout
    }

    @Test func refusedConnection() async throws {
        try await Loopback.withRefusingPort { port in
            do throws(HCIError) {
                _ = try await TCPTransport.connect(host: "127.0.0.1", port: port, timeout: .seconds(2))
                Issue.record("expected refusal")
            } catch {
                #expect(error.code == .connectionFailed)
                #expect((error.cause as? SystemCallError)?.errno == ECONNREFUSED)
                #expect(error.message.contains("nothing listens there"))
            }
        }
    }

    @Test func unknownHost() async {
        do {
            _ = try await TCPTransport.connect(host: "no-such-host.invalid", port: 9, timeout: .seconds(2))
            Issue.record("expected a resolution failure")
        } catch {
            #expect(error.code == .connectionFailed)
            #expect(error.message.contains("cannot resolve host 'no-such-host.invalid'"))
        }
    }

    /// A listener whose accept queue is full drops further SYNs, so connect hangs: the timeout must fire.
    @Test func connectTimeout() async throws {
        let peer = try LoopbackPeer(backlog: 0)
        defer { peer.shutdown() }
        var transports: [DescriptorTransport] = []
        var timedOut: HCIError?
        let start = ContinuousClock.now
        for _ in 0..<8 {
            do {
                transports.append(try await TCPTransport.connect(host: "127.0.0.1", port: peer.port, timeout: .milliseconds(300)))
            } catch {
                timedOut = error
                break
            }
        }
        for transport in transports { await transport.close() }
        #expect(timedOut?.code == .timedOut)
        #expect(timedOut?.message.contains("no connection within 300 ms") == true)
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}

@Suite struct SerialTransportTests {
    /// Opens a pseudo-terminal pair: the transport gets the slave path, the test keeps the master.
    static func openPTY() throws -> (master: Int32, path: String) {
        // posix_openpt/unlockpt/ptsname are not exported by the Glibc module: do what they do.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw SystemCallError(call: "open(/dev/ptmx)", errno: errno) }
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0, ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            let code = errno
            _ = close(master)
            throw SystemCallError(call: "ioctl(/dev/ptmx)", errno: code)
        }
        return (master, "/dev/pts/\(number)")
    }

    @Test func exchangesPacketsOverAPTY() async throws {
        let (master, path) = try Self.openPTY()
        defer { _ = close(master) }
        let transport = try await SerialTransport.open(path: path, baudRate: 1_000_000)
        try await transport.send(H4Packet(command: .leReadLocalSupportedFeatures))
        let sent = await offThread { () -> [UInt8] in
            var buffer = [UInt8](repeating: 0, count: 16)
            var fds = [pollfd(fd: master, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 2_000) == 1 else { return [] }
            let count = read(master, &buffer, 16)
            return count > 0 ? Array(buffer[0..<count]) : []
        }
        #expect(sent == [
            0x01, // H4: command
            0x03, 0x20, // LE Read Local Supported Features
            0x00, // no parameters
        ]) // byte-exact: raw mode, no CR/LF translation
        let reply: [UInt8] = [
            0x04, // H4: event
            0x0E, // Command Complete
            0x0C, // length 12
            0x01, // Num_HCI_Command_Packets
            0x03, 0x20, // opcode
            0x00, // success
            0x0A, 0x0D, 0x11, 0x13, 0x00, 0x00, 0x00, 0x00, // features, including bytes a cooked tty would mangle (LF, CR, XON, XOFF)
        ]
        _ = reply.withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
        let watchdog = Task { // bounded: closing ends the stream, so a lost reply fails the expectation
            try await Task.sleep(for: .seconds(10))
            await transport.close()
        }
        defer { watchdog.cancel() }
        var iterator = transport.packets.makeAsyncIterator()
        let packet = try await iterator.next()
        #expect(packet?.encoded == reply)
        await transport.close()
        #expect(try await iterator.next() == nil)
    }

    @Test func clearErrors() async {
        do {
            _ = try await SerialTransport.open(path: "/dev/regionkit-no-such-tty")
            Issue.record("expected failure")
        } catch {
            #expect(error.code == .noSuchAdapter)
            #expect(error.message.contains("no serial device at /dev/regionkit-no-such-tty"))
        }
        do {
            _ = try await SerialTransport.open(path: "/dev/null")
            Issue.record("expected failure")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("/dev/null is not a serial (terminal) device"))
        }
        do {
            _ = try await SerialTransport.open(path: "/dev/null", baudRate: 12_345)
            Issue.record("expected failure")
        } catch {
            #expect(error.code == .invalidParameter)
        }
    }
}
