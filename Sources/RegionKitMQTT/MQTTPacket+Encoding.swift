import NIOCore

extension MQTTPacket {
    /// Appends the packet's bytes (fixed header, variable header, payload) to `buffer`.
    ///
    /// Throws when a string is longer than 65,535 UTF-8 bytes, a QoS 1 PUBLISH has no packet id, or
    /// the packet would exceed 268,435,455 bytes of remaining length; nothing is written then.
    ///
    /// ```swift
    /// var buffer = ByteBufferAllocator().buffer(capacity: 2)
    /// try MQTTPacket.pingreq.encode(into: &buffer)    // C0 00
    /// ```
    public func encode(into buffer: inout ByteBuffer) throws(MQTTError) {
        switch self {
        case .connect(let connect):
            try Self.encodeConnect(connect, into: &buffer)
        case .connack(let connack):
            Self.writeFixedHeader(0x20, remainingLength: 2, into: &buffer)
            buffer.writeInteger(UInt8(connack.sessionPresent ? 1 : 0))   // connect acknowledge flags
            buffer.writeInteger(connack.returnCode.rawValue)               // return code
        case .publish(let publish):
            try Self.encodePublish(publish, into: &buffer)
        case .puback(let packetID):
            Self.writeFixedHeader(0x40, remainingLength: 2, into: &buffer)
            buffer.writeInteger(packetID)
        case .subscribe(let subscribe):
            var length = 2
            for subscription in subscribe.subscriptions {
                length += try Self.stringLength(subscription.filter, what: "topic filter") + 1
            }
            try Self.checkRemainingLength(length)
            Self.writeFixedHeader(0x82, remainingLength: length, into: &buffer)
            buffer.writeInteger(subscribe.packetID)
            for subscription in subscribe.subscriptions {
                Self.writeString(subscription.filter, into: &buffer)
                buffer.writeInteger(subscription.qos.rawValue)
            }
        case .suback(let suback):
            let length = 2 + suback.returnCodes.count
            try Self.checkRemainingLength(length)
            Self.writeFixedHeader(0x90, remainingLength: length, into: &buffer)
            buffer.writeInteger(suback.packetID)
            buffer.writeBytes(suback.returnCodes)
        case .unsubscribe(let unsubscribe):
            var length = 2
            for filter in unsubscribe.filters { length += try Self.stringLength(filter, what: "topic filter") }
            try Self.checkRemainingLength(length)
            Self.writeFixedHeader(0xA2, remainingLength: length, into: &buffer)
            buffer.writeInteger(unsubscribe.packetID)
            for filter in unsubscribe.filters { Self.writeString(filter, into: &buffer) }
        case .unsuback(let packetID):
            Self.writeFixedHeader(0xB0, remainingLength: 2, into: &buffer)
            buffer.writeInteger(packetID)
        case .pingreq:
            Self.writeFixedHeader(0xC0, remainingLength: 0, into: &buffer)
        case .pingresp:
            Self.writeFixedHeader(0xD0, remainingLength: 0, into: &buffer)
        case .disconnect:
            Self.writeFixedHeader(0xE0, remainingLength: 0, into: &buffer)
        }
    }

    private static func encodeConnect(_ connect: Connect, into buffer: inout ByteBuffer) throws(MQTTError) {
        // Variable header: protocol name (2 + 4), level (1), flags (1), keepalive (2).
        var length = 10 + (try stringLength(connect.clientID, what: "client id"))
        var flags: UInt8 = connect.cleanSession ? 0x02 : 0
        if let will = connect.will {
            length += try stringLength(will.topic, what: "will topic")
            length += try binaryLength(will.payload.count, what: "will message")
            flags |= 0x04 | (will.qos.rawValue << 3) | (will.retain ? 0x20 : 0)
        }
        if let username = connect.username {
            length += try stringLength(username, what: "user name")
            flags |= 0x80
        }
        if let password = connect.password {
            length += try binaryLength(password.count, what: "password")
            flags |= 0x40
        }
        try checkRemainingLength(length)
        writeFixedHeader(0x10, remainingLength: length, into: &buffer)
        writeString("MQTT", into: &buffer)
        buffer.writeInteger(UInt8(4))
        buffer.writeInteger(flags)
        buffer.writeInteger(connect.keepAliveSeconds)
        writeString(connect.clientID, into: &buffer)
        if let will = connect.will {
            writeString(will.topic, into: &buffer)
            buffer.writeInteger(UInt16(truncatingIfNeeded: will.payload.count))
            buffer.writeBytes(will.payload)
        }
        if let username = connect.username { writeString(username, into: &buffer) }
        if let password = connect.password {
            buffer.writeInteger(UInt16(truncatingIfNeeded: password.count))
            buffer.writeBytes(password)
        }
    }

    private static func encodePublish(_ publish: Publish, into buffer: inout ByteBuffer) throws(MQTTError) {
        let message = publish.message
        var length = try stringLength(message.topic, what: "topic name") + message.payload.count
        var flags: UInt8 = 0x30 | (message.qos.rawValue << 1) | (message.retain ? 0x01 : 0)
        if publish.dup { flags |= 0x08 }
        if message.qos == .atLeastOnce {
            guard publish.packetID != nil else {
                throw .invalidConfiguration("a QoS 1 PUBLISH needs a packet id")
            }
            length += 2
        }
        try checkRemainingLength(length)
        buffer.reserveCapacity(minimumWritableBytes: length + 5)
        writeFixedHeader(flags, remainingLength: length, into: &buffer)
        writeString(message.topic, into: &buffer)
        if message.qos == .atLeastOnce, let packetID = publish.packetID { buffer.writeInteger(packetID) }
        buffer.writeBytes(message.payload)
    }

    /// Fixed header: packet type and flags, then the remaining length as a base-128 varint.
    static func writeFixedHeader(_ typeAndFlags: UInt8, remainingLength: Int, into buffer: inout ByteBuffer) {
        buffer.writeInteger(typeAndFlags)
        writeRemainingLength(remainingLength, into: &buffer)
    }

    /// Writes `value` (0…268,435,455) as MQTT's variable byte integer: 7 bits per byte, least
    /// significant group first, bit 7 set on every byte but the last.
    static func writeRemainingLength(_ value: Int, into buffer: inout ByteBuffer) {
        var remaining = value
        repeat {
            var byte = UInt8(truncatingIfNeeded: remaining & 0x7F)
            remaining >>= 7
            if remaining > 0 { byte |= 0x80 }
            buffer.writeInteger(byte)
        } while remaining > 0
    }

    private static func writeString(_ string: String, into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt16(truncatingIfNeeded: string.utf8.count))
        buffer.writeString(string)
    }

    private static func stringLength(_ string: String, what: String) throws(MQTTError) -> Int {
        let count = string.utf8.count
        guard count <= Int(UInt16.max) else {
            throw .invalidConfiguration("\(what) is \(count) UTF-8 bytes; MQTT allows at most 65535")
        }
        return 2 + count
    }

    private static func binaryLength(_ count: Int, what: String) throws(MQTTError) -> Int {
        guard count <= Int(UInt16.max) else {
            throw .invalidConfiguration("\(what) is \(count) bytes; MQTT allows at most 65535")
        }
        return 2 + count
    }

    private static func checkRemainingLength(_ length: Int) throws(MQTTError) {
        guard length <= maximumRemainingLength else {
            throw .packetTooLarge(size: length, maximum: maximumRemainingLength)
        }
    }
}
