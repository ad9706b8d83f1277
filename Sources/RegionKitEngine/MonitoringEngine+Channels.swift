import RegionKitCore
import Foundation

/// The scanners' channels (``ScannerChannel``): new streams start from what their scanner's other
/// streams have shown (detectors that ``ExitDetector/usesScannerPrior``), and silences shared by
/// every stream of a scanner are excused (only those that ``ExitDetector/usesChannels``).
extension MonitoringEngine {
    /// The channel of `scannerID` (`nil`: the local adapter), if it has heard anything.
    public func channel(of scannerID: String?) -> ScannerChannel? {
        Self.channel(of: scannerID, in: channels, numbers: channelNumbers, local: localChannel)
    }

    /// ``channel(of:)`` from the engine's ``channels``, ``channelNumbers`` and ``localChannel``
    /// passed in: for closures over the engine's regions, where calling the instance method made
    /// the compiler copy the whole engine (see ``excuseSharedSilence(ofRegion:)``).
    static func channel(of scannerID: String?, in channels: [ScannerChannel], numbers: ScannerNumbers,
                        local: ScannerChannel) -> ScannerChannel? {
        guard let scannerID else { return local.lastHeard == nil ? nil : local }
        return numbers[scannerID].map { channels[$0] }
    }

    /// The number of `scannerID`'s channel in ``channels``, which gets one if it has none (a
    /// sighting at `time`).
    mutating func channelNumber(of scannerID: String, at time: Timestamp) -> (number: Int, nameHash: UInt64) {
        if let last = lastChannel, last.name == scannerID { return (last.number, last.nameHash) }
        let number: Int
        let nameHash = StreamTable.hash(scannerID)
        if let known = channelNumbers.number(of: scannerID, hash: nameHash) {
            number = known
        } else {
            if channels.count >= channelSweepAt { sweepChannels(at: time) }
            number = channels.count
            channels.append(ScannerChannel())
            channelNumbers.insert(scannerID, number: number)
        }
        lastChannel = (scannerID, number, nameHash)
        return (number, nameHash)
    }

    /// Seconds a scanner's channel is kept after it was last heard: what a channel learned
    /// about its gaps fades over this long (``ScannerChannel/longestGapMemory``), and no stream's
    /// silence is excused for longer than a detector waits.
    public static let channelRetention = ScannerChannel.longestGapMemory
    /// The most channels kept: beyond it (ever new scanner names: a misconfigured or hostile MQTT
    /// publisher) the least recently heard go first, whatever their age.
    public static let maximumChannels = 65_536
    /// The fewest channels before the first sweep.
    static let minimumChannelSweep = 1_024

    /// Drops the channels not heard for ``channelRetention`` seconds before `time` and, beyond
    /// ``maximumChannels`` / 2, the least recently heard; renumbers the rest (no
    /// ``ChannelView`` is held across a sighting, so no number is in use). The next sweep
    /// comes when the table has doubled. A deployment's real scanners (hundreds at most) never
    /// reach the first sweep.
    mutating func sweepChannels(at time: Timestamp) {
        let horizon = time.seconds - Self.channelRetention
        var kept = channelNumbers.compactMap { name, number -> (name: String, number: Int, heard: Double)? in
            // A scanner offline now is kept (it holds its beacons), as heard when it said so.
            let channel = channels[number]
            guard let heard = channel.lastHeard.map({ max($0, channel.offlineSince ?? $0) })?.seconds ?? channel.offlineSince?.seconds,
                  heard >= horizon || channel.isOffline else { return nil }
            return (name, number, heard)
        }
        if kept.count > Self.maximumChannels / 2 {
            kept.sort { ($0.heard, $0.number) > ($1.heard, $1.number) }
            kept.removeLast(kept.count - Self.maximumChannels / 2)
        }
        // An offline scanner dropped (beyond the most channels kept) lets go of what it holds.
        let keptNames = Set(kept.map(\.name))
        let released = channelNumbers.compactMap { name, number in channels[number].isOffline && !keptNames.contains(name) ? name : nil }
        defer { for name in released { releaseOfflineHolds(of: name) } }
        kept.sort { $0.number < $1.number }   // the survivors keep their order
        var survivors: [ScannerChannel] = []
        survivors.reserveCapacity(kept.count)
        var numbers = ScannerNumbers()
        numbers.reserveCapacity(kept.count)
        for entry in kept {
            numbers.insert(entry.name, number: survivors.count)
            survivors.append(channels[entry.number])
        }
        channels = survivors
        channelNumbers = numbers
        lastChannel = nil
        channelSweepAt = min(Self.maximumChannels, max(Self.minimumChannelSweep, 2 * channels.count))
    }

    /// What a sighting's scanner channel lends the streams that record it. Plain values only (no
    /// copy of the channel: it is passed to every region the sighting matches): the channel's gap
    /// list travels beside it (``recordChannel(scannerID:at:sharing:)``), so a view is trivially
    /// copied and dropped (holding the array, its optional was destroyed through generic metadata
    /// at the end of every sighting, ≈ 75 instructions).
    struct ChannelView {
        /// The channel's prior tail scale (``ScannerChannel/priorScale``).
        var priorScale: Double?
        /// The channel's prior loss for periodic streams (``ScannerChannel/priorLoss``).
        var priorLoss: Double?
        /// Its weight in periods (``ScannerChannel/priorLossWeight``).
        var priorLossWeight: Double
        /// Only for detectors that excuse shared silences (``ExitDetector/usesChannels``): the
        /// channel's gaps (given with the view) count, up to ``ScannerChannel/excuseLimit``.
        var sharing: Bool
        var excuseLimit: Double
        /// The channel's index in ``MonitoringEngine/channels``; `nil`: the local adapter's.
        var number: Int?
        /// The scanner name's ``StreamTable/hash(_:)-(String)`` (`nil`: the local adapter's), so
        /// the streams of a many-stream region are looked up without hashing the name again.
        var nameHash: UInt64?

        /// ``ScannerChannel/excusedSilence(from:to:streamRate:offline:)`` of the channel this view
        /// was taken from, given its dark `gaps` (``ScannerChannel/gaps``, as
        /// ``MonitoringEngine/recordChannel(scannerID:at:sharing:)`` returned them), for a silence
        /// that ends at `now`, when the channel has just been heard (at `now`): its current
        /// silence is then over, and only its dark gaps count (the times it said it was offline
        /// among them, up to ``ScannerChannel/offlineExcuseLimit`` of their own).
        func excusedSilence(from lastSighting: Timestamp, to now: Timestamp, streamRate: Double, gaps: [ScannerChannel.Gap]) -> Double {
            guard sharing, now > lastSighting else { return 0 }
            var (excused, declared) = (0.0, 0.0)
            ScannerChannel.creditGaps(gaps, silence: lastSighting..<now, streamRate: streamRate, to: &excused, declared: &declared)
            return min(excused, excuseLimit) + min(declared, ScannerChannel.offlineExcuseLimit)
        }
    }

    /// Records a sighting at `time` in its scanner's channel; returns what the sighting's streams
    /// take from it and, with `sharing` (for ``ExitDetector/usesChannels``), the channel's gaps
    /// (otherwise the last time it said it was offline, ``ScannerChannel/lastOffline``, if any).
    mutating func recordChannel(scannerID: String?, at time: Timestamp, sharing: Bool) -> (view: ChannelView, gaps: [ScannerChannel.Gap]) {
        func recorded(_ channel: inout ScannerChannel, number: Int?, nameHash: UInt64? = nil) -> (view: ChannelView, gaps: [ScannerChannel.Gap]) {
            channel.record(at: time)
            let lossPrior = sharing ? channel.lossPrior : nil
            let view = ChannelView(priorScale: channel.priorScale, priorLoss: lossPrior?.loss,
                                   priorLossWeight: lossPrior?.weight ?? PeriodicTail.scannerPriorFrames,
                                   sharing: sharing, excuseLimit: channel.excuseLimit, number: number, nameHash: nameHash)
            // Without sharing, the last time the scanner said it was offline, if lately: a stream
            // heard again after it does not learn that time as an interval of its own.
            return (view, sharing ? channel.gaps : channel.recentOffline(at: time).map { [$0] } ?? [])
        }
        if let scannerID {
            let (number, nameHash) = channelNumber(of: scannerID, at: time)
            // A scanner that said it was offline, heard: back (``ScannerChannel/record(at:)``),
            // and what it held is looked at again (checked only once one ever said so).
            let cameBack = offlineScannersSeen && channels[number].isOffline
            let result = recorded(&channels[number], number: number, nameHash: nameHash)
            if cameBack { releaseOfflineHolds(of: scannerID) }
            return result
        }
        return recorded(&localChannel, number: nil)
    }

    /// A sighting from `scannerID` at `time`, for an exit detector that keeps no channel view on
    /// the sighting path (``ExitDetector/usesScannerPrior`` false): recorded for what the engine
    /// tells of its scanners (``ScannerChannel/noteHeard(at:)``), back online if it said it was
    /// offline. Returns the last time it said so, lately (``ScannerChannel/recentOffline(at:)``),
    /// which the sighting's streams leave out of the intervals they learn.
    mutating func noteScannerHeard(_ scannerID: String, at time: Timestamp) -> [ScannerChannel.Gap] {
        let number = channelNumber(of: scannerID, at: time).number
        let cameBack = offlineScannersSeen && channels[number].isOffline
        channels[number].noteHeard(at: time)
        if cameBack { releaseOfflineHolds(of: scannerID) }
        return channels[number].recentOffline(at: time).map { [$0] } ?? []
    }

    /// Folds what a settled stream lends (its tail scale, and its loss when periodic) into the
    /// prior of the channel `number` (``ChannelView/number``; `nil`: the local adapter's).
    mutating func learnChannelPrior(number: Int?, prior: StreamPrior, at time: Timestamp) {
        func learn(_ channel: inout ScannerChannel) {
            channel.learnPrior(prior.scale)
            if let loss = prior.loss { channel.learnLoss(loss, frames: prior.frames, streamRate: prior.rate, at: time) }
        }
        if let number {
            learn(&channels[number])
        } else {
            learn(&localChannel)
        }
    }

    /// When region `id` is due to exit at ``now``: excuses the part of each stream's silence its
    /// scanner shared (``ScannerChannel/excusedSilence(from:to:streamRate:offline:)``; only
    /// detectors that ``ExitDetector/usesChannels``) or said it was offline
    /// (``ScannerChannel/offlineSilence(from:to:)``; every detector). Returns true when that
    /// moved a stream's deadline past now (the exit waits; the timer is moved), false when the
    /// region exits now.
    mutating func excuseSharedSilence(ofRegion id: String) -> Bool {
        let detector = profile.exitDetector
        // Without channels to share and no scanner that ever said it was offline, nothing to excuse.
        guard detector.usesChannels || offlineScannersSeen, let slot = regions.slot(of: id) else { return false }
        var updates: [(MonitoredRegion.StreamKey, Double)] = []
        // The scanners offline now that hold the region: held to the end of their excuse, and
        // looked at again when one comes back (``releaseOfflineHolds(of:)``), not every few
        // seconds while they are away (a step as short as the time between the status and the
        // due exit: a status just before it made thousands of steps).
        var heldBy: [String] = []
        // Read in place (a table copied out and kept until the update below made the update copy
        // it), with nothing of the engine but these in the closure (calling its methods there
        // made the compiler copy the whole engine, its 50 references retained and released).
        let (channels, numbers, local, now) = (self.channels, channelNumbers, localChannel, self.now)
        regions.readStreams(slot: slot) { _, streams in
            streams.forEachStream { key, stream, _ in
                guard let channel = Self.channel(of: key.scannerID, in: channels, numbers: numbers, local: local) else { return }
                let rate = 1 / max(stream.meanInterval, 1e-3)
                let threshold = detector.silenceThreshold(for: stream)
                // What excuses the silence, given `offline` seconds the scanner said it was away: its
                // dark gaps' part stops at the detector's longest silence (the cap), its own word
                // adds up to its limit beyond that.
                func excuse(offline: Double) -> (excused: Double, cap: Double) {
                    var excused = offline
                    if detector.usesChannels {
                        excused = channel.excusedSilence(from: stream.lastSighting, to: now, streamRate: rate, offline: offline)
                        // The scanner is silent now but not yet long enough to tell a blackout from chance
                        // (few other streams, heard slowly): having shown blackouts, it is given until it can,
                        // looked at again every step (a sighting of any stream there may settle it sooner).
                        if let undecided = channel.undecidedSilence(at: now, due: stream.lastSighting + threshold, streamRate: rate) {
                            excused = max(excused, min(undecided, now + Self.excuseStep) - stream.lastSighting - threshold)
                        }
                    }
                    return (excused, (detector.usesChannels ? max(detector.maximumSilence - threshold, 0) : 0) + offline)
                }
                let away = channel.offlineSilence(from: stream.lastSighting, to: now)
                var (excused, cap) = excuse(offline: away)
                // Alive by its scanner's word, which is offline now: held as if it stays away to
                // the end of its excuse (a stream already gone before the word is not).
                let held = channel.isOffline && away > 0 && stream.lastSighting + threshold + min(excused, cap) > now
                if held { (excused, cap) = excuse(offline: ScannerChannel.offlineExcuseLimit) }
                guard excused > stream.excusedSilence else { return }
                guard stream.lastSighting + threshold + min(excused, cap) > now else { return }
                // While the scanner stays dark the deadline moves with it: check again no sooner than
                // a short step later (never in a loop of tiny steps).
                excused = min(max(excused, now + Self.excuseStep - stream.lastSighting - threshold), cap)
                updates.append((key, excused))
                if held, let scanner = key.scannerID { heldBy.append(scanner) }
            }
        }
        for scanner in heldBy { offlineHolds[scanner, default: OfflineHolds()].regions.insert(id) }
        guard !updates.isEmpty else { return false }
        regions.updateStreams(slot: slot) { _, streams in
            for (key, excused) in updates {
                if let position = streams.index(forKey: key) { streams[position: position].excusedSilence = excused }
            }
        }
        schedule.setExitLeader(nil, slot: slot)
        reschedule(id)
        return true
    }

    /// Scanner `scannerID` said at `time` that it went offline (`online: false`) or is back: the
    /// status it publishes (ESPresense's retained `espresense/rooms/<room>/status`, a Theengs
    /// gateway's will). While it is offline, the beacons only it hears neither leave their regions
    /// nor their room: their silence from then on is the scanner's, up to
    /// ``ScannerChannel/offlineExcuseLimit``; back online, their silence counts from its return.
    /// Going offline reschedules nothing (an exit or absence looks at the scanner when it comes
    /// due, and is then held in one step); coming back looks again at once at what it held
    /// (`releaseOfflineHolds(of:)`).
    ///
    /// ```swift
    /// engine.setScannerStatus("kitchen", online: false, at: now)   // the node reboots
    /// engine.advance(to: now + 30)                                  // no exit for its beacons
    /// engine.setScannerStatus("kitchen", online: true, at: now + 30)
    /// ```
    public mutating func setScannerStatus(_ scannerID: String, online: Bool, at time: Timestamp) -> [LocationEvent] {
        let events = advance(to: time)
        // (A time beyond the clock's, or none, is now: an infinite one would stay offline for good.)
        let time = time.seconds.isFinite ? max(time, now) : now
        if let number = channelNumbers[scannerID] {
            let wasOffline = channels[number].isOffline
            channels[number].setOnline(online, at: time)
            if wasOffline && online { releaseOfflineHolds(of: scannerID) }
        } else if !online {
            // Not heard yet (a retained status read before its first sighting): a channel to say so.
            let (number, _) = channelNumber(of: scannerID, at: time)
            channels[number].setOnline(false, at: time)
        }
        if !online { offlineScannersSeen = true }
        return events
    }

    /// What a scanner offline now holds (``excuseSharedSilence(ofRegion:)``, ``nearestAbsentDeadline(_:)``):
    /// regions and beacons whose exit or absence waits to the end of its excuse.
    struct OfflineHolds {
        var regions: Set<String> = []
        var beacons: Set<BeaconIdentity> = []
    }

    /// `scannerID` is back (its status, or a sighting from it): the regions and beacons it held
    /// are looked at again now, their excuse the exact time it was away — each exits (or leaves
    /// its room) as soon as its silence outside that time is over, or waits for it.
    mutating func releaseOfflineHolds(of scannerID: String) {
        guard let holds = offlineHolds.removeValue(forKey: scannerID) else { return }
        for id in holds.regions {
            guard let slot = regions.slot(of: id) else { continue }
            regions.updateStreams(slot: slot) { _, streams in
                var held: [MonitoredRegion.StreamKey] = []
                streams.forEachStream { key, stream, _ in
                    if key.scannerID == scannerID, stream.excusedSilence > 0 { held.append(key) }
                }
                for key in held {
                    if let position = streams.index(forKey: key) { streams[position: position].excusedSilence = 0 }
                }
            }
            schedule.setExitLeader(nil, slot: slot)
            reschedule(slot: slot)
        }
        for identity in holds.beacons {
            guard var state = nearest[identity] else { continue }
            // Filed even when due already (it leaves at the next advance), and held again by
            // another scanner offline now if one still holds it.
            _ = fileNearestAbsence(identity, &state)
            nearest[identity] = state
        }
    }

    /// Files `identity`'s absence at ``nearestAbsentDeadline(_:)`` of `state` (its `absentAt`),
    /// noting the scanners offline now that hold it; returns that deadline. Nothing is filed and
    /// `nil` returned without a track, or when the deadline is not after `onlyAfter`.
    mutating func fileNearestAbsence(_ identity: BeaconIdentity, _ state: inout NearestScannerState, onlyAfter: Timestamp? = nil) -> Timestamp? {
        let (deadline, heldBy) = nearestAbsentDeadline(state)
        guard let deadline, onlyAfter.map({ deadline > $0 }) ?? true else { return nil }
        for scanner in heldBy { offlineHolds[scanner, default: OfflineHolds()].beacons.insert(identity) }
        state.absentAt = deadline
        nearestAbsences.push(NearestAbsence(time: deadline, identity: identity))
        return deadline
    }

    /// The last time a sighting's scanner said it was offline, lately (``ScannerChannel/recentOffline(at:)``),
    /// for its room track: from the sighting's `channel` and `gaps` (``recordChannel(scannerID:at:sharing:)``,
    /// or the one gap ``noteScannerHeard(_:at:)`` gave). `nil` without gaps: none then.
    func lastOffline(_ channel: ChannelView?, gaps: [ScannerChannel.Gap]?) -> ScannerChannel.Gap? {
        guard let gaps else { return nil }
        guard let channel, profile.exitDetector.usesChannels else { return gaps.first }   // the only one given
        return (channel.number.map { channels[$0] } ?? localChannel).recentOffline(at: now)
    }

    /// Whether `scannerID` said it is offline and has not come back (``setScannerStatus(_:online:at:)``).
    public func isScannerOffline(_ scannerID: String) -> Bool {
        channel(of: scannerID)?.isOffline ?? false
    }

    /// Every named scanner the engine keeps a channel for, with its channel, in no particular
    /// order: each that reported a sighting or said whether it is online (under every exit
    /// detector: those that do not ``ExitDetector/usesScannerPrior`` keep it only to tell of the
    /// scanner, their streams take nothing from it). Kept until a sweep
    /// (``channelRetention``, once the table has grown past 1,024 channels). The local
    /// adapter's channel (sightings without a scanner) is not among them.
    ///
    /// ```swift
    /// for (name, channel) in engine.scannerChannels { print(name, channel.lastHeard as Any, channel.isOffline) }
    /// ```
    public var scannerChannels: [(name: String, channel: ScannerChannel)] {
        channelNumbers.map { (name: $0.key, channel: channels[$0.value]) }
    }

    /// The scanners that said they are offline and have not come back, sorted.
    public var offlineScanners: [String] {
        channelNumbers.compactMap { name, number in channels[number].isOffline ? name : nil }.sorted()
    }

    /// ``NearestScannerState/absentDeadline(detector:offlineSilence:)`` under the profile's
    /// exit detector, each track's deadline put off by the time its scanner said it was offline.
    /// A track whose scanner is offline now counts as held to the end of its excuse
    /// (``ScannerChannel/offlineExcuseLimit``); `heldBy` names those scanners, which look at the
    /// beacon again when they come back (``releaseOfflineHolds(of:)``).
    func nearestAbsentDeadline(_ state: NearestScannerState) -> (deadline: Timestamp?, heldBy: [String]) {
        let detector = profile.exitDetector
        guard offlineScannersSeen else { return (state.absentDeadline(detector: detector), []) }
        let (channels, numbers, local, now) = (self.channels, channelNumbers, localChannel, self.now)
        var heldBy: [String] = []
        let deadline = state.absentDeadline(detector: detector) { scanner, lastSighting, due in
            guard let channel = Self.channel(of: scanner, in: channels, numbers: numbers, local: local) else { return 0 }
            let offline = channel.offlineSilence(from: lastSighting, to: now)
            // (A track gone before its scanner's word is not held by it.)
            guard channel.isOffline, offline > 0, due + offline > now else { return offline }
            heldBy.append(scanner)
            return ScannerChannel.offlineExcuseLimit
        }
        return (deadline, heldBy)
    }

    /// The shortest wait, seconds, when an exit is put off because the scanner is silent.
    static let excuseStep = 0.1
}
