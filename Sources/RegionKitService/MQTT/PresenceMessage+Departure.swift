extension PresenceMessage {
    /// What says on `topic` that a beacon is placed nowhere any more (its room `not_home`, its
    /// distance `None`), QoS 1: `text` retained when `kept` (a Home Assistant entity reads the
    /// topic, and must find the departure there after its own restart); otherwise `text` to the
    /// subscribers of the moment, not retained, then an empty retained message, which removes the
    /// topic from the broker. Retained for every identity ever heard, departures grew the broker
    /// without bound: a publisher inventing identities, or a neighbour's beacons walking past,
    /// each left topics behind for good (review finding).
    ///
    /// ```swift
    /// PresenceMessage.departure(topic: topics.beaconRoom(beacon), text: "not_home", kept: false)
    /// // [not_home (not retained), "" (retained: the topic is removed)]
    /// ```
    public static func departure(topic: String, text: String, kept: Bool) -> [PresenceMessage] {
        kept ? [PresenceMessage(topic: topic, text: text, qos: 1, retain: true)]
            : [PresenceMessage(topic: topic, text: text, qos: 1, retain: false), PresenceMessage(topic: topic, payload: [], qos: 1, retain: true)]
    }
}
