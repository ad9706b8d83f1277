/// Reads structured values off a fuzz input, front to back; past the end it yields zeros, so every
/// input decodes to some sequence of operations.
///
/// ```swift
/// var input = FuzzInput(bytes)
/// let count = input.int(in: 0...8)
/// ```
public struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { position >= bytes.count }
    public var remaining: [UInt8] { position < bytes.count ? Array(bytes[position...]) : [] }

    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    public mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    public mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A value in `range` (which must hold fewer than 65,536 values).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(uint16()) % (range.upperBound - range.lowerBound + 1)
    }

    /// A double: mostly in `range`, sometimes one of the awkward values (NaN, ±infinity, huge, tiny, -0).
    public mutating func double(in range: ClosedRange<Double>) -> Double {
        let selector = byte()
        switch selector {
        case 0: return .nan
        case 1: return .infinity
        case 2: return -.infinity
        case 3: return .greatestFiniteMagnitude
        case 4: return -.greatestFiniteMagnitude
        case 5: return .leastNonzeroMagnitude
        case 6: return -0.0
        case 7: return Double(bitPattern: uint64())
        default:
            let fraction = Double(uint16()) / 65_535
            return range.lowerBound + (range.upperBound - range.lowerBound) * fraction
        }
    }

    /// Up to `maximum` bytes.
    public mutating func bytes(maximum: Int) -> [UInt8] {
        let count = int(in: 0...maximum)
        return (0..<count).map { _ in byte() }
    }

    /// Splits the rest of the input into chunks of 1...`maximum` bytes (sizes from the input's first bytes).
    public static func chunks(_ data: [UInt8], maximum: Int) -> [[UInt8]] {
        guard let first = data.first else { return [] }
        let size = 1 + Int(first) % maximum
        var chunks: [[UInt8]] = []
        var start = 1
        while start < data.count {
            let end = min(data.count, start + size)
            chunks.append(Array(data[start..<end]))
            start = end
        }
        return chunks
    }
}
