import RegionKit

extension ReplayEvaluation {
    /// The evaluation as one JSON object (`regionkit eval replay --json` prints one per recording
    /// × profile). Seconds are rounded to milliseconds; a measure that does not apply is `null`.
    ///
    /// ```swift
    /// print(result.jsonLine().text)
    /// // {"recording":"TwoScannersRun1-2015-03-03.json.gz","profile":"responsive","sightings":39802,...}
    /// ```
    public func jsonLine() -> JSONLine {
        var line = JSONLine()
        line.add("recording", recording)
        line.add("profile", profile)
        line.add("sightings", sightings)
        line.add("duration_s", duration, decimals: 3)
        var settings = JSONLine()
        settings.add("silence_s", options.silence)
        settings.add("tail_s", options.tail)
        settings.add("flap_window_s", options.flapWindow)
        settings.add("tolerance_s", options.tolerance)
        settings.add("recent_window_s", options.recentWindow)
        line.add("options", object: settings)

        for (key, countKey, exits) in [("false_exits", "stationary_streams", falseExits), ("stay_exits", "stays", stayExits)] {
            guard let exits else {
                line.addRaw(key, json: "null")
                continue
            }
            var object = JSONLine()
            object.add("count", exits.count)
            object.add(countKey, exits.streams)
            object.add("beacon_hours", exits.beaconHours, decimals: 4)
            Self.add(&object, "per_1000_beacon_hours", exits.perThousandBeaconHours, decimals: 2)
            object.add("events", array: exits.events.map { event in
                var item = Self.stream(event.key)
                item.add("t", event.time, decimals: 3)
                return item
            })
            line.add(key, object: object)
        }

        var latency = JSONLine()
        for rateClass in StreamRateClass.allCases {
            let summary = self.latency(rateClass)
            var object = JSONLine()
            object.add("ends", summary.ends)
            object.add("missed", summary.missed)
            Self.add(&object, "p50_s", summary.p50, decimals: 3)
            Self.add(&object, "p95_s", summary.p95, decimals: 3)
            Self.add(&object, "max_s", summary.max, decimals: 3)
            latency.add(rateClass.rawValue, object: object)
        }
        line.add("exit_latency", object: latency)

        var perClass = JSONLine()
        for rateClass in StreamRateClass.allCases {
            let figures = self.figures(rateClass)
            var object = JSONLine()
            object.add("streams", figures.streams)
            object.add("stationary_streams", figures.stationaryStreams)
            object.add("stationary_hours", figures.stationaryHours, decimals: 4)
            object.add("false_exits", figures.falseExits)
            object.add("stay_streams", figures.stays)
            object.add("stay_hours", figures.stayHours, decimals: 4)
            object.add("stay_exits", figures.stayExits)
            object.add("ends", figures.ends)
            object.add("missed", figures.missed)
            Self.add(&object, "p50_s", figures.p50, decimals: 3)
            Self.add(&object, "p95_s", figures.p95, decimals: 3)
            object.add("departure_exits", figures.departureLatencies.count)
            Self.add(&object, "departure_p50_s", figures.departureP50, decimals: 3)
            Self.add(&object, "departure_p95_s", figures.departureP95, decimals: 3)
            object.add("departures", figures.departureRecentGaps.count)
            Self.add(&object, "departure_recent_gap_p50_s", figures.recentGapP50, decimals: 3)
            Self.add(&object, "departure_recent_gap_p95_s", figures.recentGapP95, decimals: 3)
            object.add("flaps", figures.flaps)
            perClass.add(rateClass.rawValue, object: object)
        }
        line.add("per_class", object: perClass)

        var flapCounts = JSONLine()
        for rateClass in StreamRateClass.allCases { flapCounts.add(rateClass.rawValue, flapCount(rateClass)) }
        flapCounts.add("total", flaps.count)
        line.add("flaps", object: flapCounts)

        for (key, rooms) in [("room_assignment_carried", carriedRooms), ("room_assignment_stationary", stationaryRooms)] {
            guard let rooms else {
                line.addRaw(key, json: "null")
                continue
            }
            var object = JSONLine()
            let total = rooms.total
            Self.add(&object, "score", total.fraction, decimals: 4)
            object.add("scored_s", total.scored, decimals: 1)
            object.add("correct_s", total.correct, decimals: 1)
            object.add("beacons", array: rooms.beacons.sorted { $0.key < $1.key }.map { identity, score in
                var item = JSONLine()
                item.add("beacon", identity.description)
                Self.add(&item, "score", score.fraction, decimals: 4)
                item.add("scored_s", score.scored, decimals: 1)
                return item
            })
            line.add(key, object: object)
        }

        line.add("streams", array: streams.map { stream in
            var item = Self.stream(stream.key)
            item.add("sightings", stream.sightings)
            item.add("first_s", stream.first, decimals: 3)
            item.add("last_s", stream.last, decimals: 3)
            item.add("rate_hz", stream.rate, decimals: 3)
            Self.add(&item, "median_interval_s", stream.medianInterval, decimals: 3)
            item.add("class", stream.rateClass.rawValue)
            return item
        })
        line.add("ends", array: ends.map { end in
            var item = Self.stream(end.key)
            item.add("class", end.rateClass.rawValue)
            item.add("last_sighting_s", end.lastSighting, decimals: 3)
            Self.add(&item, "resumed_s", end.resumed, decimals: 3)
            Self.add(&item, "latency_s", end.latency, decimals: 3)
            item.add("end_of_recording", end.endOfRecording)
            item.add("heard_since_s", end.history.heardSince, decimals: 3)
            item.add("segment_sightings", end.history.sightings)
            item.add("longest_recent_gap_s", end.history.longestRecentGap, decimals: 3)
            return item
        })
        line.add("flap_events", array: flaps.map { flap in
            var item = Self.stream(flap.key)
            item.add("exit_s", flap.exit, decimals: 3)
            item.add("reentry_s", flap.reentry, decimals: 3)
            return item
        })
        line.addRaw("notes", json: "[\(notes.map(JSONLine.quote).joined(separator: ","))]")
        return line
    }

    static func stream(_ key: SightingStream.Key) -> JSONLine {
        var item = JSONLine()
        item.add("beacon", key.identity.description)
        if let scanner = key.scannerID { item.add("scanner", scanner) } else { item.addRaw("scanner", json: "null") }
        return item
    }

    static func add(_ line: inout JSONLine, _ key: String, _ value: Double?, decimals: Int) {
        if let value, value.isFinite { line.add(key, value, decimals: decimals) } else { line.addRaw(key, json: "null") }
    }
}
