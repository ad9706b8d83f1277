import Foundation
import RegionKit

/// Which advertisements a scanner misses: independent losses, or losses that come in bursts.
///
/// Real losses are bursty: a body between beacon and scanner, a Wi-Fi burst on the shared 2.4 GHz
/// band or the scanner's own duty cycle (it listens on one advertising channel at a time) blank out
/// runs of consecutive frames. ``gilbertElliott(goodLoss:burstLoss:meanGood:meanBurst:)`` models this
/// with the classic two-state channel: a *good* state with light loss and a *burst* state with heavy
/// loss, each lasting an exponentially distributed time. ``bursty(lossRate:meanBurst:burstShare:)``
/// builds one with a given long-run loss, so an independent and a bursty channel can be compared
/// at the same average loss.
///
/// ```swift
/// let channel = LossChannel.bursty(lossRate: 0.3)          // 1 s blackouts carry half the losses
/// var random = SeededRandom(seed: 1)
/// var link = channel.link(random: &random)                 // one beacon–scanner link, in its stationary state
/// link.isLost(at: 0.1, random: &random)                    // true or false
/// ```
public enum LossChannel: Hashable, Sendable, Codable {
    /// Each frame is lost independently with probability `lossRate`.
    case independent(lossRate: Double)
    /// A two-state Markov channel in continuous time: frames are lost with probability `goodLoss`
    /// in the good state and `burstLoss` in the burst state; the states last exponentially
    /// distributed times with means `meanGood` and `meanBurst` seconds.
    case gilbertElliott(goodLoss: Double, burstLoss: Double, meanGood: Double, meanBurst: Double)

    /// A Gilbert–Elliott channel whose long-run loss is `lossRate`, with `burstShare` of the lost
    /// frames falling in total blackouts (burst loss 100 %) of mean length `meanBurst` seconds and
    /// the rest lost independently in between.
    ///
    /// The burst state then takes a share π = `burstShare` · `lossRate` of the time, so bursts start
    /// on average every `meanBurst` / π seconds, and the good state loses (`lossRate` − π) / (1 − π).
    /// Defaults: 1 s blackouts carrying half of the losses (at 30 % loss: a blackout every 6.7 s,
    /// 17.6 % loss between them).
    public static func bursty(lossRate: Double, meanBurst: Double = 1, burstShare: Double = 0.5) -> LossChannel {
        let share = min(max(burstShare, 0), 1) * min(max(lossRate, 0), 1)
        guard share > 0, share < 1 else { return .independent(lossRate: lossRate) }
        return .gilbertElliott(goodLoss: (lossRate - share) / (1 - share), burstLoss: 1,
                               meanGood: meanBurst * (1 - share) / share, meanBurst: meanBurst)
    }

    /// The long-run share of frames lost.
    public var lossRate: Double {
        switch self {
        case .independent(let lossRate):
            return lossRate
        case .gilbertElliott(let goodLoss, let burstLoss, let meanGood, let meanBurst):
            let burstTime = meanBurst / (meanGood + meanBurst)
            return goodLoss * (1 - burstTime) + burstLoss * burstTime
        }
    }

    /// Checks the parameters; `context` names the caller in the error.
    public func validate(_ context: String) throws {
        func probability(_ value: Double, _ name: String) throws {
            guard value.isFinite, (0...1).contains(value) else {
                throw RegionKitError(.invalidArgument, "\(context): \(name) \(value) must be within 0...1")
            }
        }
        switch self {
        case .independent(let lossRate):
            try probability(lossRate, "loss rate")
        case .gilbertElliott(let goodLoss, let burstLoss, let meanGood, let meanBurst):
            try probability(goodLoss, "good-state loss")
            try probability(burstLoss, "burst-state loss")
            guard meanGood.isFinite, meanGood > 0, meanBurst.isFinite, meanBurst > 0 else {
                throw RegionKitError(.invalidArgument, "\(context): mean state durations (\(meanGood) s, \(meanBurst) s) must be > 0")
            }
        }
    }

    /// A link over this channel, starting in the channel's stationary state (in a burst with the
    /// burst state's long-run probability, with a fresh exponential time left in it).
    public func link(random: inout SeededRandom) -> Link {
        switch self {
        case .independent:
            return Link(channel: self, inBurst: false, nextSwitch: .infinity)
        case .gilbertElliott(_, _, let meanGood, let meanBurst):
            let inBurst = random.uniform() < meanBurst / (meanGood + meanBurst)
            return Link(channel: self, inBurst: inBurst, nextSwitch: Self.exponential(mean: inBurst ? meanBurst : meanGood, random: &random))
        }
    }

    /// The running state of one beacon–scanner link.
    public struct Link: Sendable {
        public let channel: LossChannel
        /// Whether the link is in the burst state (as of the last query).
        public private(set) var inBurst: Bool
        /// When the state next changes, seconds.
        var nextSwitch: Double

        /// Whether a frame sent at `time` (seconds; queries must not go back in time) is lost.
        public mutating func isLost(at time: Double, random: inout SeededRandom) -> Bool {
            switch channel {
            case .independent(let lossRate):
                return random.uniform() < lossRate
            case .gilbertElliott(let goodLoss, let burstLoss, let meanGood, let meanBurst):
                while nextSwitch <= time {
                    inBurst.toggle()
                    nextSwitch += LossChannel.exponential(mean: inBurst ? meanBurst : meanGood, random: &random)
                }
                return random.uniform() < (inBurst ? burstLoss : goodLoss)
            }
        }
    }

    static func exponential(mean: Double, random: inout SeededRandom) -> Double {
        -mean * log(1 - random.uniform())
    }
}
