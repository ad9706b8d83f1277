/// Builds a btsnoop capture in memory: the 16-byte file header ("btsnoop\0",
/// version 1, datalink), then records as they are appended.
///
/// ```swift
/// var writer = BTSnoopWriter()
/// writer.append(packet: H4Packet(command: .reset), direction: .sent, unixMicroseconds: now)
/// writer.append(packet: resetComplete, direction: .received, unixMicroseconds: now + 900)
/// try Data(writer.bytes).write(to: URL(fileURLWithPath: "capture.btsnoop"))
/// // `tshark -r capture.btsnoop -V` decodes it.
/// ```
public struct BTSnoopWriter: Sendable {
    public let datalink: BTSnoopDatalink
    /// The file so far.
    public private(set) var bytes: [UInt8]

    /// "btsnoop" followed by a NUL.
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]

    public init(datalink: BTSnoopDatalink = .h4) {
        self.datalink = datalink
        bytes = Self.header(datalink: datalink)
    }

    /// The 16-byte file header.
    public static func header(datalink: BTSnoopDatalink) -> [UInt8] {
        var header = magic
        header.appendBE(UInt32(1)) // version
        header.appendBE(datalink.rawValue)
        return header
    }

    public mutating func append(_ record: BTSnoopRecord) {
        bytes += record.encoded
    }

    /// Appends an H4 packet record (datalink 1002).
    public mutating func append(packet: H4Packet, direction: BTSnoopRecord.Direction, unixMicroseconds: Int64) {
        append(BTSnoopRecord(packet: packet, direction: direction, unixMicroseconds: unixMicroseconds))
    }

    /// One record's bytes, for appending to a file that already has its header.
    public static func encode(_ record: BTSnoopRecord) -> [UInt8] { record.encoded }
}
