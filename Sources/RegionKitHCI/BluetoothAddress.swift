/// A 48-bit Bluetooth device address (BD_ADDR).
///
/// ``bytes`` are stored most-significant first, the order in which the address
/// is written (`"AA:BB:CC:DD:EE:FF"`). On the HCI wire the same address travels
/// least-significant byte first; ``wireBytes`` and ``init(wireBytes:)`` convert.
///
/// ```swift
/// let address = BluetoothAddress("C0:FF:EE:00:00:01")!
/// address.bytes.first   // 0xC0
/// address.wireBytes     // [0x01, 0x00, 0x00, 0xEE, 0xFF, 0xC0]
/// address.description   // "C0:FF:EE:00:00:01"
/// ```
public struct BluetoothAddress: Hashable, Sendable, CustomStringConvertible {
    /// The six address bytes, most-significant first.
    public let bytes: [UInt8]

    /// The all-zero address 00:00:00:00:00:00.
    public static let zero = BluetoothAddress(uncheckedBytes: [0, 0, 0, 0, 0, 0])

    /// Creates an address from six bytes, most-significant first; nil unless exactly six bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 6 else { return nil }
        self.bytes = bytes
    }

    /// Creates an address from six bytes in HCI wire order (least-significant first).
    public init?(wireBytes: [UInt8]) {
        guard wireBytes.count == 6 else { return nil }
        bytes = wireBytes.reversed()
    }

    /// Parses `"AA:BB:CC:DD:EE:FF"` (hex digits, either case, `:` or `-` separators).
    public init?(_ string: String) {
        let parts = string.split(separator: ":", omittingEmptySubsequences: false)
        let pieces = parts.count == 6 ? parts : string.split(separator: "-", omittingEmptySubsequences: false)
        guard pieces.count == 6 else { return nil }
        var result: [UInt8] = []
        for piece in pieces {
            guard piece.count == 2, piece.allSatisfy(\.isHexDigit), let byte = UInt8(piece, radix: 16) else { return nil }
            result.append(byte)
        }
        bytes = result
    }

    init(uncheckedBytes: [UInt8]) { bytes = uncheckedBytes }

    /// The address in HCI wire order (least-significant byte first).
    public var wireBytes: [UInt8] { bytes.reversed() }

    /// `"AA:BB:CC:DD:EE:FF"`, most-significant byte first, upper-case hex.
    public var description: String {
        bytes.map { hex($0).dropFirst(2) }.joined(separator: ":")
    }
}

extension ByteReader {
    mutating func address(_ field: String) throws(HCIError) -> BluetoothAddress {
        BluetoothAddress(uncheckedBytes: try bytes(6, field).reversed())
    }
}
