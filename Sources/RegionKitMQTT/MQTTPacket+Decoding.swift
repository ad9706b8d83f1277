import NIOCore

extension MQTTPacket {
    /// Reads one packet from the front of `buffer`, or returns `nil` (consuming nothing) when the
    /// packet is not complete yet. Checks the fixed header (type, flags, remaining length, size) as
    /// soon as its bytes are there, so an oversized or malformed packet fails before it is buffered.
    ///
    /// - Parameter maximumPacketSize: the largest whole packet (fixed header included) accepted.
    /// - Throws: `MQTTError.protocolError` naming what was wrong and the byte offset in the packet;
    ///   `buffer` is then left where the bad packet starts.
    ///
    /// ```swift
    /// var buffer = ByteBuffer(bytes: [0xD0, 0x00])
    /// let packet = try MQTTPacket.decode(from: &buffer)      // .pingresp
    /// ```
    public static func decode(
        from buffer: inout ByteBuffer,
        maximumPacketSize: Int = MQTTClientConfiguration.defaultMaximumIncomingPacketSize
    ) throws(MQTTError) -> MQTTPacket? {
        let start = buffer.readerIndex
        guard let (type, flags, headerLength, remainingLength) = try fixedHeader(in: buffer) else { return nil }
        let total = headerLength + remainingLength
        guard total <= maximumPacketSize else {
            throw fail(.packetTooLarge,
                       "packet of \(total) bytes exceeds the maximum incoming packet size of \(maximumPacketSize)", at: 1)
        }
        guard buffer.readableBytes >= total,
              let body = buffer.getSlice(at: start + headerLength, length: remainingLength) else { return nil }
        var reader = Reader(buffer: body, base: headerLength)
        let packet = try parse(type: type, flags: flags, reader: &reader)
        buffer.moveReaderIndex(forwardBy: total)
        return packet
    }

    /// The head of a PUBLISH larger than the client accepts: what the client needs to skip its
    /// bytes, acknowledge it and say what it skipped, without its payload.
    public struct OversizedPublish: Sendable, Hashable {
        public var topic: String
        /// Its packet id (QoS 1: the client acknowledges it), nil at QoS 0.
        public var packetID: UInt16?
        public var retain: Bool
        /// The whole packet's size, bytes (fixed header included).
        public var size: Int
    }

    /// When the packet at the front of `buffer` is a PUBLISH larger than `maximumPacketSize`
    /// (``decode(from:maximumPacketSize:)`` throws `packetTooLarge` for it): its head, read
    /// without consuming anything, once the fixed header, topic and packet id are there — at most
    /// 65,541 bytes, whatever the packet's size; nil until then. Throws for a packet at the front
    /// that is not an oversized PUBLISH, or whose head is malformed (as `decode` would).
    ///
    /// ```swift
    /// if let head = try MQTTPacket.oversizedPublish(in: buffer, maximumPacketSize: 1 << 21) { skip(head.size) }
    /// ```
    public static func oversizedPublish(in buffer: ByteBuffer, maximumPacketSize: Int) throws(MQTTError) -> OversizedPublish? {
        let start = buffer.readerIndex
        guard let (type, flags, headerLength, remainingLength) = try fixedHeader(in: buffer) else { return nil }
        let total = headerLength + remainingLength
        guard type == 3, total > maximumPacketSize else {
            throw fail(.unexpectedPacket, "\(typeName(type)) of \(total) bytes is not an oversized PUBLISH", at: 0)
        }
        // The topic's length, the topic, and at QoS 1 the packet id (within the packet: a
        // remaining length too short for them is malformed, as in `decode`).
        let qos1 = flags & 0x06 != 0
        guard let topicLength = buffer.getInteger(at: start + headerLength, as: UInt16.self) else { return nil }
        let headLength = 2 + Int(topicLength) + (qos1 ? 2 : 0)
        guard headLength <= remainingLength else {
            throw fail(.truncated, "PUBLISH topic name and packet id (\(headLength) bytes) longer than its remaining length \(remainingLength)", at: headerLength)
        }
        guard buffer.readableBytes >= headerLength + headLength,
              let head = buffer.getSlice(at: start + headerLength, length: headLength) else { return nil }
        var reader = Reader(buffer: head, base: headerLength)
        let topic = try reader.readString("PUBLISH topic name", topicName: true)
        let packetID = qos1 ? try reader.readPacketID("PUBLISH packet id") : nil
        return OversizedPublish(topic: topic, packetID: packetID, retain: flags & 0x01 != 0, size: total)
    }

    /// The fixed header at the front of `buffer` (type, flags, its own length, the remaining length),
    /// checked as soon as its bytes are there; nil until it is complete. Consumes nothing.
    private static func fixedHeader(
        in buffer: ByteBuffer
    ) throws(MQTTError) -> (type: UInt8, flags: UInt8, headerLength: Int, remainingLength: Int)? {
        let start = buffer.readerIndex
        guard let first = buffer.getInteger(at: start, as: UInt8.self) else { return nil }
        let type = first >> 4
        let flags = first & 0x0F
        try checkFixedHeader(type: type, flags: flags)
        var remainingLength = 0
        var shift = 0
        var index = 1
        while true {
            guard let byte = buffer.getInteger(at: start + index, as: UInt8.self) else { return nil }
            remainingLength |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { break }
            guard index < 4 else {
                throw fail(.malformedRemainingLength, "remaining length continues past its fourth byte", at: index)
            }
            shift += 7
            index += 1
        }
        return (type, flags, index + 1, remainingLength)
    }

    private static func checkFixedHeader(type: UInt8, flags: UInt8) throws(MQTTError) {
        switch type {
        case 0, 15:
            throw fail(.reservedPacketType, "reserved packet type \(type)", at: 0)
        case 5, 6, 7:
            let name = type == 5 ? "PUBREC" : type == 6 ? "PUBREL" : "PUBCOMP"
            throw fail(.qos2NotSupported, "\(name) (QoS 2 flow) is not supported", at: 0)
        case 3:
            let qos = (flags >> 1) & 0x03
            if qos == 3 { throw fail(.invalidValue, "PUBLISH with QoS 3", at: 0) }
            if qos == 2 { throw fail(.qos2NotSupported, "PUBLISH with QoS 2 (never subscribed with QoS 2)", at: 0) }
        case 8, 10:
            guard flags == 0x02 else {
                throw fail(.invalidFixedHeaderFlags, "\(typeName(type)) fixed header flags 0x\(hex(flags)), must be 0x2", at: 0)
            }
        default:
            guard flags == 0 else {
                throw fail(.invalidFixedHeaderFlags, "\(typeName(type)) fixed header flags 0x\(hex(flags)), must be 0x0", at: 0)
            }
        }
    }

    private static func parse(type: UInt8, flags: UInt8, reader: inout Reader) throws(MQTTError) -> MQTTPacket {
        switch type {
        case 1:
            return .connect(try parseConnect(&reader))
        case 2:
            let ackFlags = try reader.readUInt8("CONNACK acknowledge flags")
            guard ackFlags & 0xFE == 0 else {
                throw fail(.invalidValue, "CONNACK reserved acknowledge flag bits set (0x\(hex(ackFlags)))", at: reader.offset - 1)
            }
            let code = try reader.readUInt8("CONNACK return code")
            try reader.expectEnd("CONNACK")
            return .connack(ConnAck(sessionPresent: ackFlags == 1, returnCode: MQTTConnectReturnCode(rawValue: code)))
        case 3:
            return .publish(try parsePublish(flags: flags, reader: &reader))
        case 4:
            let id = try reader.readPacketID("PUBACK packet id")
            try reader.expectEnd("PUBACK")
            return .puback(packetID: id)
        case 8:
            let id = try reader.readPacketID("SUBSCRIBE packet id")
            var subscriptions: [Subscription] = []
            repeat {
                let filterOffset = reader.offset
                let filter = try reader.readString("SUBSCRIBE topic filter")
                do throws(MQTTError) { try MQTTTopicFilter.validateFilter(filter) } catch {
                    throw fail(.invalidValue, "SUBSCRIBE topic filter '\(filter)': \(error)", at: filterOffset)
                }
                let options = try reader.readUInt8("SUBSCRIBE requested QoS")
                switch options {
                case 0, 1: subscriptions.append(Subscription(filter: filter, qos: options == 0 ? .atMostOnce : .atLeastOnce))
                case 2: throw fail(.qos2NotSupported, "SUBSCRIBE requested QoS 2", at: reader.offset - 1)
                default: throw fail(.invalidValue, "SUBSCRIBE requested QoS byte 0x\(hex(options))", at: reader.offset - 1)
                }
            } while !reader.atEnd
            return .subscribe(Subscribe(packetID: id, subscriptions: subscriptions))
        case 9:
            let id = try reader.readPacketID("SUBACK packet id")
            guard !reader.atEnd else { throw fail(.truncated, "SUBACK without return codes", at: reader.offset) }
            let codes = try reader.readRest()
            for (i, code) in codes.enumerated() where !(code <= 2 || code == SubAck.failure) {
                throw fail(.invalidValue, "SUBACK return code 0x\(hex(code))", at: reader.offset - codes.count + i)
            }
            return .suback(SubAck(packetID: id, returnCodes: codes))
        case 10:
            let id = try reader.readPacketID("UNSUBSCRIBE packet id")
            var filters: [String] = []
            repeat {
                filters.append(try reader.readString("UNSUBSCRIBE topic filter"))
            } while !reader.atEnd
            return .unsubscribe(Unsubscribe(packetID: id, filters: filters))
        case 11:
            let id = try reader.readPacketID("UNSUBACK packet id")
            try reader.expectEnd("UNSUBACK")
            return .unsuback(packetID: id)
        case 12:
            try reader.expectEnd("PINGREQ")
            return .pingreq
        case 13:
            try reader.expectEnd("PINGRESP")
            return .pingresp
        default: // 14; the others were rejected by checkFixedHeader
            try reader.expectEnd("DISCONNECT")
            return .disconnect
        }
    }

    private static func parsePublish(flags: UInt8, reader: inout Reader) throws(MQTTError) -> Publish {
        let qos: MQTTQoS = (flags & 0x06) == 0 ? .atMostOnce : .atLeastOnce
        let dup = flags & 0x08 != 0
        if qos == .atMostOnce, dup { throw fail(.invalidFixedHeaderFlags, "PUBLISH QoS 0 with DUP set", at: 0) }
        let topic = try reader.readString("PUBLISH topic name", topicName: true)
        var packetID: UInt16?
        if qos == .atLeastOnce { packetID = try reader.readPacketID("PUBLISH packet id") }
        let payload = try reader.readRest()
        return Publish(message: MQTTMessage(topic: topic, payload: payload, qos: qos, retain: flags & 0x01 != 0),
                       packetID: packetID, dup: dup)
    }

    private static func parseConnect(_ reader: inout Reader) throws(MQTTError) -> Connect {
        let nameOffset = reader.offset
        let name = try reader.readString("CONNECT protocol name")
        guard name == "MQTT" else { throw fail(.invalidValue, "CONNECT protocol name '\(name)', must be 'MQTT'", at: nameOffset) }
        let level = try reader.readUInt8("CONNECT protocol level")
        guard level == 4 else { throw fail(.invalidValue, "CONNECT protocol level \(level), must be 4", at: reader.offset - 1) }
        let flags = try reader.readUInt8("CONNECT flags")
        let flagsOffset = reader.offset - 1
        guard flags & 0x01 == 0 else { throw fail(.invalidValue, "CONNECT reserved flag set", at: flagsOffset) }
        let hasWill = flags & 0x04 != 0
        let willQoS = (flags >> 3) & 0x03
        let willRetain = flags & 0x20 != 0
        if !hasWill, willQoS != 0 || willRetain {
            throw fail(.invalidValue, "CONNECT will QoS or will retain without the will flag", at: flagsOffset)
        }
        if willQoS == 2 { throw fail(.qos2NotSupported, "CONNECT will QoS 2", at: flagsOffset) }
        if willQoS == 3 { throw fail(.invalidValue, "CONNECT will QoS 3", at: flagsOffset) }
        let hasPassword = flags & 0x40 != 0
        let hasUsername = flags & 0x80 != 0
        if hasPassword, !hasUsername { throw fail(.invalidValue, "CONNECT password flag without user name flag", at: flagsOffset) }
        let keepAlive = try reader.readUInt16("CONNECT keepalive")
        let clientID = try reader.readString("CONNECT client id")
        var will: MQTTMessage?
        if hasWill {
            let topic = try reader.readString("CONNECT will topic", topicName: true)
            let payload = try reader.readBinary("CONNECT will message")
            will = MQTTMessage(topic: topic, payload: payload, qos: willQoS == 0 ? .atMostOnce : .atLeastOnce, retain: willRetain)
        }
        let username = hasUsername ? try reader.readString("CONNECT user name") : nil
        let password = hasPassword ? try reader.readBinary("CONNECT password") : nil
        try reader.expectEnd("CONNECT")
        return Connect(clientID: clientID, cleanSession: flags & 0x02 != 0, keepAliveSeconds: keepAlive, will: will,
                       username: username, password: password)
    }

    static func typeName(_ type: UInt8) -> String {
        switch type {
        case 1: "CONNECT"
        case 2: "CONNACK"
        case 3: "PUBLISH"
        case 4: "PUBACK"
        case 5: "PUBREC"
        case 6: "PUBREL"
        case 7: "PUBCOMP"
        case 8: "SUBSCRIBE"
        case 9: "SUBACK"
        case 10: "UNSUBSCRIBE"
        case 11: "UNSUBACK"
        case 12: "PINGREQ"
        case 13: "PINGRESP"
        case 14: "DISCONNECT"
        default: "reserved type \(type)"
        }
    }

    static func hex(_ byte: UInt8) -> String { String(byte, radix: 16, uppercase: true) }

    static func fail(_ kind: MQTTProtocolError.Kind, _ what: String, at offset: Int) -> MQTTError {
        .protocolError(MQTTProtocolError(kind: kind, what: what, offset: offset))
    }

    /// Reads the fields of one packet's body; `offset` counts from the packet's first byte.
    struct Reader {
        var buffer: ByteBuffer
        let base: Int
        let startIndex: Int

        init(buffer: ByteBuffer, base: Int) {
            self.buffer = buffer
            self.base = base
            self.startIndex = buffer.readerIndex
        }

        var offset: Int { base + buffer.readerIndex - startIndex }
        var atEnd: Bool { buffer.readableBytes == 0 }

        mutating func readUInt8(_ what: String) throws(MQTTError) -> UInt8 {
            guard let value = buffer.readInteger(as: UInt8.self) else { throw truncated(what) }
            return value
        }

        mutating func readUInt16(_ what: String) throws(MQTTError) -> UInt16 {
            guard let value = buffer.readInteger(as: UInt16.self) else { throw truncated(what) }
            return value
        }

        mutating func readPacketID(_ what: String) throws(MQTTError) -> UInt16 {
            let value = try readUInt16(what)
            guard value != 0 else { throw MQTTPacket.fail(.invalidValue, "\(what) is 0", at: offset - 2) }
            return value
        }

        mutating func readBinary(_ what: String) throws(MQTTError) -> [UInt8] {
            let length = Int(try readUInt16("\(what) length"))
            guard let bytes = buffer.readBytes(length: length) else { throw truncated(what) }
            return bytes
        }

        /// A UTF-8 string with its 16-bit length: must be well-formed UTF-8 without U+0000; a topic
        /// name must also be non-empty and free of the wildcards `+` and `#`.
        mutating func readString(_ what: String, topicName: Bool = false) throws(MQTTError) -> String {
            let length = Int(try readUInt16("\(what) length"))
            let stringOffset = offset
            guard buffer.readableBytes >= length else { throw truncated(what) }
            if topicName, length == 0 { throw MQTTPacket.fail(.invalidValue, "\(what) is empty", at: stringOffset) }
            let checked: Result<String, MQTTError> = buffer.withUnsafeReadableBytes { raw in
                let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<length])
                for (i, byte) in bytes.enumerated() {
                    if byte == 0 {
                        return .failure(MQTTPacket.fail(.invalidUTF8, "\(what) contains U+0000", at: stringOffset + i))
                    }
                    if topicName, byte == UInt8(ascii: "+") || byte == UInt8(ascii: "#") {
                        return .failure(MQTTPacket.fail(.invalidValue, "\(what) contains the wildcard '\(Character(Unicode.Scalar(byte)))'",
                                                        at: stringOffset + i))
                    }
                }
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    return .failure(MQTTPacket.fail(.invalidUTF8, "\(what) is not valid UTF-8", at: stringOffset))
                }
                return .success(string)
            }
            buffer.moveReaderIndex(forwardBy: length)
            return try checked.get()
        }

        mutating func readRest() throws(MQTTError) -> [UInt8] {
            buffer.readBytes(length: buffer.readableBytes) ?? []
        }

        func expectEnd(_ packet: String) throws(MQTTError) {
            guard buffer.readableBytes == 0 else {
                throw MQTTPacket.fail(.trailingBytes, "\(buffer.readableBytes) unexpected bytes at the end of \(packet)", at: offset)
            }
        }

        func truncated(_ what: String) -> MQTTError {
            MQTTPacket.fail(.truncated, "packet ends inside \(what)", at: offset)
        }
    }
}
