/// A bounds-checked cursor over bytes. Every read either succeeds or throws
/// an ``HCIError`` naming the field and the absolute offset; it never traps.
///
/// ```swift
/// var reader = ByteReader([0x03, 0x0C], baseOffset: 1)
/// let opcode = try reader.uint16LE("opcode") // 0x0C03
/// ```
struct ByteReader {
    let bytes: [UInt8]
    /// Index of the next byte in `bytes`.
    private(set) var position: Int = 0
    /// Added to `position` when reporting offsets, so errors are relative to the outer packet.
    let baseOffset: Int

    init(_ bytes: [UInt8], baseOffset: Int = 0) {
        self.bytes = bytes
        self.baseOffset = baseOffset
    }

    var remaining: Int { bytes.count - position }
    var isAtEnd: Bool { position >= bytes.count }
    /// Absolute offset of the next byte.
    var offset: Int { baseOffset + position }

    private func need(_ count: Int, _ field: String) throws(HCIError) {
        if count < 0 || remaining < count {
            throw HCIError(
                code: .truncated,
                message: "\(field) needs \(count) byte(s) but only \(max(remaining, 0)) remain",
                offset: offset
            )
        }
    }

    mutating func uint8(_ field: String) throws(HCIError) -> UInt8 {
        try need(1, field)
        let value = bytes[position]
        position += 1
        return value
    }

    mutating func int8(_ field: String) throws(HCIError) -> Int8 {
        Int8(bitPattern: try uint8(field))
    }

    mutating func uint16LE(_ field: String) throws(HCIError) -> UInt16 {
        try need(2, field)
        let value = UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
        position += 2
        return value
    }

    mutating func uint32BE(_ field: String) throws(HCIError) -> UInt32 {
        try need(4, field)
        var value: UInt32 = 0
        for index in position..<(position + 4) { value = value << 8 | UInt32(bytes[index]) }
        position += 4
        return value
    }

    mutating func uint64BE(_ field: String) throws(HCIError) -> UInt64 {
        try need(8, field)
        var value: UInt64 = 0
        for index in position..<(position + 8) { value = value << 8 | UInt64(bytes[index]) }
        position += 8
        return value
    }

    mutating func bytes(_ count: Int, _ field: String) throws(HCIError) -> [UInt8] {
        try need(count, field)
        let slice = Array(bytes[position..<(position + count)])
        position += count
        return slice
    }

    mutating func rest() -> [UInt8] {
        guard position < bytes.count else { return [] }
        let slice = Array(bytes[position...])
        position = bytes.count
        return slice
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func appendBE(_ value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendBE(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

/// Formats a byte as `0xNN`.
func hex(_ value: UInt8) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + (digits.count < 2 ? "0" + digits : digits)
}

/// Formats a 16-bit value as `0xNNNN`.
func hex(_ value: UInt16) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}
