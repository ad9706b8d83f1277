import Foundation

/// The evidence beyond the gaps (issue 15, items 3 and 4), used by
/// ``ExitDetector/evidenceGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``:
///
/// - the **RSSI trend**: a beacon walking away fades before it goes silent; one behind a blackout
///   does not. The slope b of an exponentially weighted regression of RSSI on time over the last
///   few seconds (``trendSeconds``, or ``trendIntervals`` mean intervals if longer) is compared with
///   its standard error σ/√Sxx, σ² the stream's own one-step RSSI prediction error. The stream is
///   *fading* at a sighting when b ≤ −``fadeZ`` standard errors and b ≤ −``minimumFade`` dB/s.
///   How often a stream that is still there fades (``fadeShare``) and how often a fading sighting is
///   followed by a long gap anyway (``fadeTailShare``, starting from the stream's own tail share:
///   fading is presumed uninformative until its intervals show otherwise) are learned per stream, so the exit decision
///   stays "a silence this long, after a fading sighting, would come less than once per 10,000
///   stream-hours";
/// - **other scanners**: the same beacon heard, during this stream's silence, at least as strongly
///   by another scanner (``heardElsewhere``) — it moved. The share of this stream's long silences
///   that it came back from despite that (``elsewhereShare``) is learned per stream.
///
/// ```swift
/// var stream = ReceptionEstimator(firstSighting: .zero, priorInterval: 1, rssi: -60)
/// for step in 1...50 { stream.record(at: Timestamp(seconds: Double(step) * 0.1), rssi: -60 - step / 10) }
/// stream.rssiSlope   // ≈ −1 dB/s
/// stream.fading      // true
/// ```
extension ReceptionEstimator {
    /// Seconds the trend regression weighs e-fold (at least).
    public static let trendSeconds = 4.0
    /// Mean intervals the trend regression weighs e-fold, when longer than ``trendSeconds``.
    public static let trendIntervals = 8.0
    /// Slope standard errors a falling trend must reach to count as fading.
    public static let fadeZ = 3.0
    /// Smallest falling slope, dB/s, that counts as fading.
    public static let minimumFade = 0.3
    /// Weighted RSSI samples the regression needs before it can say anything.
    public static let trendMinimumWeight = 4.0
    /// The RSSI prediction error variance before any is measured, dB² (4 dB).
    public static let rssiVariancePrior = 16.0
    /// Sightings the RSSI spread averages over once warmed up.
    public static let rssiVarianceMemory = 200.0
    /// The fading share a new stream starts from, and how many sightings it is worth.
    public static let fadeSharePrior = 0.1
    public static let fadeSharePriorWeight = 20.0
    /// Sightings the fading share averages over once warmed up (also its floor's inverse).
    public static let fadeMemory = 2_000.0
    /// How many intervals the prior of P(long gap | fading) — the stream's own tail share — is worth.
    public static let fadeTailPriorWeight = 20.0
    /// Intervals after fading sightings the fade tail share averages over once warmed up.
    public static let fadeTailMemory = 2_000.0
    /// Stronger sightings at other scanners that count as "heard elsewhere".
    public static let elsewhereEvidence = 3
    /// How far below this stream's RSSI level a sighting elsewhere may be and still count, dB.
    public static let elsewhereMargin = 0.0
    /// The share of long silences with the beacon heard elsewhere a stream starts from, and how
    /// many long silences it is worth.
    public static let elsewherePrior = 0.05
    public static let elsewherePriorWeight = 4.0
    /// Long silences the elsewhere share averages over once warmed up (also its floor's inverse).
    public static let elsewhereMemory = 100.0

    /// The evidence state, or its prior when the stream does not track it (``tracksEvidence``).
    public var evidence: ReceptionEvidence { evidenceStorage.first ?? ReceptionEvidence() }

    /// Σw of the RSSI trend regression (``ReceptionEvidence/trendWeight``). (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var trendWeight: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().trendWeight : evidenceStorage[0].trendWeight }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].trendWeight = newValue } }
    }

    /// Σw·x of the trend regression. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var trendTime: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().trendTime : evidenceStorage[0].trendTime }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].trendTime = newValue } }
    }

    /// Σw·x² of the trend regression. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var trendTimeSquares: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().trendTimeSquares : evidenceStorage[0].trendTimeSquares }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].trendTimeSquares = newValue } }
    }

    /// Σw·r of the trend regression. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var trendRSSI: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().trendRSSI : evidenceStorage[0].trendRSSI }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].trendRSSI = newValue } }
    }

    /// Σw·x·r of the trend regression. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var trendProduct: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().trendProduct : evidenceStorage[0].trendProduct }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].trendProduct = newValue } }
    }

    /// The stream's own RSSI spread: the running mean of its squared one-step prediction errors, dB². (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var rssiVariance: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().rssiVariance : evidenceStorage[0].rssiVariance }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].rssiVariance = newValue } }
    }

    /// RSSI samples behind ``rssiVariance``. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var rssiSamples: Int {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().rssiSamples : evidenceStorage[0].rssiSamples }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].rssiSamples = newValue } }
    }

    /// Whether the stream was fading (a falling trend, significant against its own spread) at its last sighting. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var fading: Bool {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().fading : evidenceStorage[0].fading }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].fading = newValue } }
    }

    /// Share of sightings at which the stream was fading (running mean, ≈ the last ``fadeMemory``). (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var fadeShare: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().fadeShare : evidenceStorage[0].fadeShare }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].fadeShare = newValue } }
    }

    /// Share of the intervals that followed a fading sighting and reached the tail (0 before any). (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var fadeTailShare: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().fadeTailShare : evidenceStorage[0].fadeTailShare }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].fadeTailShare = newValue } }
    }

    /// Intervals behind ``fadeTailShare``. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var fadeIntervals: Int {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().fadeIntervals : evidenceStorage[0].fadeIntervals }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].fadeIntervals = newValue } }
    }

    /// Sightings of the same beacon by *other* scanners during the current silence, at least as strong as this stream's RSSI level (counted up to ``ReceptionEstimator/elsewhereEvidence``). Reset by every sighting of this stream. (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public var heardElsewhere: Int {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().heardElsewhere : evidenceStorage[0].heardElsewhere }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].heardElsewhere = newValue } }
    }

    /// Share of this stream's tail intervals (long silences it came back from: it had not left) during which it was heard elsewhere ``elsewhereEvidence`` times (running mean, prior ``elsewherePrior``). (Stored in ``ReceptionEvidence``; the prior when the stream does not track evidence, and writes are then dropped.)
    public internal(set) var elsewhereShare: Double {
        get { evidenceStorage.isEmpty ? ReceptionEvidence().elsewhereShare : evidenceStorage[0].elsewhereShare }
        set { if !evidenceStorage.isEmpty { evidenceStorage[0].elsewhereShare = newValue } }
    }

    /// The regression's time scale, seconds.
    var trendMemory: Double { max(Self.trendSeconds, Self.trendIntervals * meanInterval) }

    /// The weighted spread of the regression's times, Σw·(x − x̄)², s².
    var trendTimeSpread: Double {
        guard trendWeight > 0 else { return 0 }
        return max(trendTimeSquares - trendTime * trendTime / trendWeight, 0)
    }

    /// The slope of the stream's recent RSSI, dB per second (0 until it can be estimated).
    public var rssiSlope: Double {
        let spread = trendTimeSpread
        guard trendWeight >= Self.trendMinimumWeight, spread > 1e-9 else { return 0 }
        let slope = (trendProduct - trendTime * trendRSSI / trendWeight) / spread
        return slope.isFinite ? slope : 0
    }

    /// The stream's RSSI level at its last sighting (the regression's value there), dBm, or the
    /// last RSSI when there is no regression yet.
    public var rssiLevel: Double? {
        guard trendWeight > 0 else { return lastRSSI.map(Double.init) }
        let mean = trendRSSI / trendWeight
        let level = mean - rssiSlope * trendTime / trendWeight
        return level.isFinite ? level : lastRSSI.map(Double.init)
    }

    /// The slope in standard errors of the stream's own spread (negative: fading).
    public var rssiSlopeScore: Double {
        let spread = trendTimeSpread
        guard trendWeight >= Self.trendMinimumWeight, spread > 1e-9 else { return 0 }
        let error = (max(rssiVariance, 1e-6) / spread).squareRoot()
        return rssiSlope / error
    }

    /// The multiplier (≤ 1) of the stream's tail share that the evidence at its current silence
    /// gives: `fadeShare · fadeTailShare / tailShare` when it was fading at its last sighting,
    /// times `elsewhereShare` when it was heard elsewhere ``elsewhereEvidence`` times since. 1
    /// with no evidence (a steady stream is unchanged).
    public var evidenceFactor: Double {
        var factor = 1.0
        if fading {
            // P(long gap | fading): the stream's own tail share (fading says nothing) worth
            // fadeTailPriorWeight intervals, moved by the intervals that did follow fading sightings.
            let share = max(tailShare, 1 / Self.tailShareMemory)
            let seen = min(Double(fadeIntervals), Self.fadeTailMemory)
            let afterFade = (seen * fadeTailShare + Self.fadeTailPriorWeight * share) / (seen + Self.fadeTailPriorWeight)
            let fade = max(fadeShare, 1 / Self.fadeMemory) * max(afterFade, 1 / Self.fadeTailMemory)
            factor *= min(fade / share, 1)
        }
        if heardElsewhere >= Self.elsewhereEvidence {
            factor *= min(max(elsewhereShare, 1 / Self.elsewhereMemory), 1)
        }
        return factor
    }

    /// Counts a sighting of the same beacon by another scanner at `rssi`, at `time`, during this
    /// stream's silence: true when that changed ``heardElsewhere`` (and so, possibly, the deadline).
    /// A stream that does not track evidence yet starts to (from its prior).
    public mutating func recordElsewhere(rssi: Int, at time: Timestamp) -> Bool {
        startTrackingEvidence()
        guard time > lastSighting, heardElsewhere < Self.elsewhereEvidence else { return false }
        if let level = rssiLevel, Double(rssi) < level - Self.elsewhereMargin { return false }
        heardElsewhere += 1
        return true
    }

    /// Called by ``record(at:rssi:excused:)`` with the interval that just ended (`inTail`: it
    /// reached the tail) before the new sighting's trend is folded in: learns how often a fading
    /// sighting was followed by a long gap, and how often a long gap had the beacon heard elsewhere.
    mutating func recordEvidence(inTail: Bool) {
        if fading {
            fadeIntervals += 1
            let weight = max(1 / Double(fadeIntervals), 1 / Self.fadeTailMemory)
            fadeTailShare += weight * ((inTail ? 1 : 0) - fadeTailShare)
        }
        if inTail {
            let weight = max(1 / (Double(tailIntervals + 1) + Self.elsewherePriorWeight), 1 / Self.elsewhereMemory)
            elsewhereShare += weight * ((heardElsewhere >= Self.elsewhereEvidence ? 1 : 0) - elsewhereShare)
        }
        heardElsewhere = 0
    }

    /// Moves the regression's frame `elapsed` seconds on (decaying it) and adds `rssi` at x = 0;
    /// updates the RSSI spread with the one-step prediction error and the fading state.
    mutating func recordTrend(rssi: Double?, after elapsed: Double) {
        let d = max(elapsed, 0)
        if d > 0, trendWeight > 0 {
            // Predict the new RSSI from the regression so far (for the spread).
            if let rssi, trendWeight >= Self.trendMinimumWeight {
                let mean = trendRSSI / trendWeight
                let predicted = mean + rssiSlope * (d - trendTime / trendWeight)
                let error = rssi - predicted
                if error.isFinite {
                    rssiSamples += 1
                    let weight = max(1 / (Double(rssiSamples) + 1), 1 / Self.rssiVarianceMemory)
                    rssiVariance += weight * (error * error - rssiVariance)
                }
            }
            let w = exp(-d / trendMemory)
            trendTimeSquares = (trendTimeSquares - 2 * d * trendTime + d * d * trendWeight) * w
            trendTime = (trendTime - d * trendWeight) * w
            trendProduct = (trendProduct - d * trendRSSI) * w
            trendRSSI *= w
            trendWeight *= w
            if trendWeight < 1e-9 {
                trendWeight = 0
                trendTime = 0
                trendTimeSquares = 0
                trendRSSI = 0
                trendProduct = 0
            }
        }
        guard let rssi, rssi.isFinite else { return }
        trendWeight += 1
        trendRSSI += rssi
        let slope = rssiSlope
        fading = slope <= -Self.minimumFade && rssiSlopeScore <= -Self.fadeZ
        let weight = max(1 / (Double(sightings) + Self.fadeSharePriorWeight), 1 / Self.fadeMemory)
        fadeShare += weight * ((fading ? 1 : 0) - fadeShare)
    }
}
