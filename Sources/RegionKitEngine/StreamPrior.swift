/// What a settled stream lends its scanner's prior for the streams that come after it
/// (``ExitDetector/streamPrior(of:)``): the scale of its silences' tail
/// (``ScannerChannel/learnPrior(_:)``) and, for a periodic stream showing no bursts of its own
/// under ``ExitDetector/periodicGaps(falseExitsPerHour:minimumSilence:maximumSilence:priorInterval:)``,
/// its frame loss (``ScannerChannel/learnLoss(_:frames:streamRate:at:)``).
///
/// ```swift
/// if let prior = detector.streamPrior(of: stream) {
///     channel.learnPrior(prior.scale)
///     if let loss = prior.loss { channel.learnLoss(loss, frames: prior.frames, streamRate: prior.rate, at: now) }
/// }
/// ```
public struct StreamPrior: Hashable, Sendable {
    /// The tail scale, seconds (``ExitDetector/tailScale(of:)``).
    public var scale: Double
    /// The periodic frame loss, 0...1; `nil` when the stream is not periodic, shows bursts, or
    /// the detector does not model periodic streams.
    public var loss: Double?
    /// The periods ``loss`` was learned from.
    public var frames: Double
    /// The stream's sightings per second (``ScannerChannel/lossLinks`` counts links by it).
    public var rate: Double

    public init(scale: Double, loss: Double? = nil, frames: Double = 0, rate: Double = 0) {
        self.scale = scale
        self.loss = loss
        self.frames = frames
        self.rate = rate
    }
}
