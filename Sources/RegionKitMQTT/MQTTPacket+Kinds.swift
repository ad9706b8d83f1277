extension MQTTPacket {
    /// CONNECT (§3.1): the first packet of every connection.
    ///
    /// ```swift
    /// let connect = MQTTPacket.Connect(clientID: "hub", keepAliveSeconds: 30)
    /// ```
    public struct Connect: Sendable, Hashable {
        public var clientID: String
        public var cleanSession: Bool
        /// Keepalive in seconds (0 disables it; the client never sends 0).
        public var keepAliveSeconds: UInt16
        public var will: MQTTMessage?
        public var username: String?
        /// Binary in MQTT 3.1.1; ours is always UTF-8 text.
        public var password: [UInt8]?

        public init(clientID: String, cleanSession: Bool = true, keepAliveSeconds: UInt16, will: MQTTMessage? = nil,
                    username: String? = nil, password: [UInt8]? = nil) {
            self.clientID = clientID
            self.cleanSession = cleanSession
            self.keepAliveSeconds = keepAliveSeconds
            self.will = will
            self.username = username
            self.password = password
        }
    }

    /// CONNACK (§3.2).
    public struct ConnAck: Sendable, Hashable {
        public var sessionPresent: Bool
        public var returnCode: MQTTConnectReturnCode
        public init(sessionPresent: Bool, returnCode: MQTTConnectReturnCode) {
            self.sessionPresent = sessionPresent
            self.returnCode = returnCode
        }
    }

    /// PUBLISH (§3.3). `packetID` is present exactly when the QoS is 1.
    public struct Publish: Sendable, Hashable {
        public var message: MQTTMessage
        public var packetID: UInt16?
        public var dup: Bool
        public init(message: MQTTMessage, packetID: UInt16? = nil, dup: Bool = false) {
            self.message = message
            self.packetID = packetID
            self.dup = dup
        }
    }

    /// One topic filter of a SUBSCRIBE with its requested QoS.
    public struct Subscription: Sendable, Hashable {
        public var filter: String
        public var qos: MQTTQoS
        public init(filter: String, qos: MQTTQoS) {
            self.filter = filter
            self.qos = qos
        }
    }

    /// SUBSCRIBE (§3.8): at least one filter.
    public struct Subscribe: Sendable, Hashable {
        public var packetID: UInt16
        public var subscriptions: [Subscription]
        public init(packetID: UInt16, subscriptions: [Subscription]) {
            self.packetID = packetID
            self.subscriptions = subscriptions
        }
    }

    /// SUBACK (§3.9): one return code per filter of the SUBSCRIBE, in order: 0x00–0x02 the granted
    /// QoS, 0x80 failure.
    public struct SubAck: Sendable, Hashable {
        public static let failure: UInt8 = 0x80
        public var packetID: UInt16
        public var returnCodes: [UInt8]
        public init(packetID: UInt16, returnCodes: [UInt8]) {
            self.packetID = packetID
            self.returnCodes = returnCodes
        }
    }

    /// UNSUBSCRIBE (§3.10): at least one filter.
    public struct Unsubscribe: Sendable, Hashable {
        public var packetID: UInt16
        public var filters: [String]
        public init(packetID: UInt16, filters: [String]) {
            self.packetID = packetID
            self.filters = filters
        }
    }
}
