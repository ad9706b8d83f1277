import Foundation
import RegionKitCore
#if canImport(Glibc)
import Glibc
#endif

/// A gateway recording being read a chunk at a time (``GatewayFileReader/open()``): each
/// ``next()`` reads one chunk of the file and returns the sightings it completed, so a replay
/// paces and feeds them while the rest of the file is still unread (a recording of millions of
/// sightings used to be held whole in memory first, and a pipe replayed nothing until it closed).
/// Damage is handled as ``GatewayFileReader/read(_:)`` handles it; ``report`` is complete once
/// ``next()`` has returned nil.
///
/// ```swift
/// let reading = try GatewayFileReader(path: "run.json.gz").open()
/// while let sightings = reading.next() {
///     for sighting in sightings { await play(sighting) }
/// }
/// if let error = reading.report.error(path: "run.json.gz") { print(error.message) }
/// ```
public final class GatewayFileReading {
    /// What was delivered so far and what was skipped or cut off (complete at the end).
    public private(set) var report = GatewayReadReport()

    private let reader: GatewayFileReader
    private let handle: FileHandle
    private let inflater: GzipInflater?
    private var splitter: ConcatenatedJSONSplitter
    // A sighting whose time is over a day from the sightings around it is a damaged timestamp
    // (a flipped bit moves it by years), or a lone sighting beyond a long gap: left out with a
    // warning (``GatewayReadReport/timeOutliers``). Made the replay's origin, the first
    // sighting's collapsed the whole recording.
    private var outliers = TimestampOutlierFilter<GatewaySighting>(threshold: GatewayFileReader.outlierMilliseconds)
    private let mode: mode_t
    /// Not a regular file (a device, a pipe, a socket): it may never end.
    private let endless: Bool
    /// Bytes read since the last sighting that decoded.
    private var sinceObject = 0
    private var ended = false
    /// The bytes read to tell gzip from plain JSON, read again with the first chunk (through this
    /// handle: a second open of a pipe took them from the stream), or why they could not be.
    private var head: Data
    private var headError: (any Error)?

    init(_ reader: GatewayFileReader) throws {
        let path = reader.path
        guard UnreadableFile.reason(path) == nil, let handle = FileHandle(forReadingAtPath: path) else {
            throw RegionKitError(.malformedInput, UnreadableFile.message(path, "cannot open the gateway recording"))
        }
        // A read error here is reported by the first ``next()``, which reads no further.
        do {
            head = try handle.read(upToCount: 2) ?? Data()
        } catch {
            head = Data()
            headError = error
        }
        let gzip = head == Data([0x1F, 0x8B])
        do {
            inflater = gzip ? try GzipInflater(source: path) : nil
        } catch {
            try? handle.close()
            throw error
        }
        self.reader = reader
        self.handle = handle
        splitter = ConcatenatedJSONSplitter(source: gzip ? "\(path) (decompressed)" : path, skipsDamage: true)
        var status = stat()
        endless = stat(path, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG
        mode = status.st_mode
    }

    deinit {
        try? handle.close()
    }

    /// Reads the next chunk and returns the sightings it completed, in file order (none, when it
    /// completed none); nil once the file has been read to its end or to damage that stops it
    /// (damage is counted in ``report``, never thrown).
    public func next() -> [GatewaySighting]? {
        guard !ended else { return nil }
        var sightings: [GatewaySighting] = []
        var chunk = head
        head = Data()
        do {
            if let headError { throw headError }
            // Compressed, a chunk is read 16 KiB at most: its bytes inflate to up to ~1,000
            // times as many, and 256 KiB of compressed white space made one 256 MB buffer.
            chunk += try readChunk(inflater != nil ? Swift.min(reader.chunkSize, GatewayFileReader.compressedChunkLimit) : reader.chunkSize)
        } catch {
            report.stoppedBy = RegionKitError(.malformedInput, "\(reader.path): read error after \(report.sightings) sightings", cause: error)
            return finish(into: &sightings)
        }
        if chunk.isEmpty { return finish(into: &sightings) }
        var plain: [UInt8] = []
        if let inflater {
            do {
                try inflater.inflate(Array(chunk), into: &plain)
            } catch {
                // What was decompressed before the damage is still delivered.
                deliver(plain, into: &sightings)
                report.stoppedBy = error as? RegionKitError ?? RegionKitError(.malformedInput, "\(reader.path): \(error)", cause: error)
                return finish(into: &sightings)
            }
        } else {
            plain = Array(chunk)
        }
        deliver(plain, into: &sightings)
        return stopsWithoutSightings() ? finish(into: &sightings) : sightings
    }

    /// Up to `count` bytes: from a regular file as many as it has; from a pipe, a device or a
    /// socket what one read(2) gives (`FileHandle.read(upToCount:)` waits for all `count` or the
    /// end, so a pipe's writer that wrote less was replayed only once it closed). Empty at the end.
    private func readChunk(_ count: Int) throws -> Data {
        guard endless else { return try handle.read(upToCount: count) ?? Data() }
        var buffer = [UInt8](repeating: 0, count: count)
        while true {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, count) }
            if got >= 0 { return Data(buffer[0..<got]) }
            // A POSIX error as FileHandle's read throws one: its report says the system's reason.
            guard errno == EINTR else { throw NSError(domain: NSPOSIXErrorDomain, code: Int(errno)) }
        }
    }

    /// Splits and decodes `plain`, appending the sightings it completed that are not time outliers.
    private func deliver(_ plain: [UInt8], into sightings: inout [GatewaySighting]) {
        // Counted from the last sighting that decodes: random bytes balance braces now and then.
        sinceObject += plain.count
        // Cannot throw with skipsDamage: damage is counted by the splitter.
        for object in (try? splitter.feed(plain)) ?? [] {
            let sighting: GatewaySighting
            do {
                sighting = try GatewaySighting(json: object.bytes, offset: object.offset, source: splitter.source)
                sinceObject = 0
            } catch {
                report.skippedSightings += 1
                if report.firstSkipOffset == nil {
                    report.note(skip: error as? RegionKitError ?? RegionKitError(.malformedInput, "\(error)"), at: object.offset)
                }
                continue
            }
            outliers.insert(sighting, time: Double(sighting.timeMilliseconds), offset: object.offset) { kept, _ in
                sightings.append(kept)
                report.sightings += 1
            }
        }
    }

    /// A stream that is not a regular file gave ``GatewayFileReader/maximumBytesWithoutObject``
    /// without a sighting: reading it further (it may not end) stops, said in the report.
    /// Checked before the next read, which may block for good on a pipe gone quiet.
    private func stopsWithoutSightings() -> Bool {
        guard endless, sinceObject > reader.maximumBytesWithoutObject else { return false }
        if report.stoppedBy == nil {
            report.stoppedBy = RegionKitError(.malformedInput, """
                \(splitter.source): \(reader.maximumBytesWithoutObject >> 20) MiB read without a sighting (up to offset \(splitter.offset)): \
                not a gateway recording, and a \(GatewayFileReader.kind(mode)) may not end: stopped
                """)
        }
        return true
    }

    /// The end: the sightings the outlier filter still held, and the report completed. Nil when
    /// there are no more sightings.
    private func finish(into sightings: inout [GatewaySighting]) -> [GatewaySighting]? {
        ended = true
        outliers.finish { kept, _ in
            sightings.append(kept)
            report.sightings += 1
        }
        report.timeOutliers = outliers.dropped
        let source = splitter.source
        report.firstTimeOutlier = outliers.firstDropped.map { offset, time in
            "\(source): the sighting at offset \(offset), time \(Int64(exactly: time.rounded()).map(String.init) ?? "\(time)") ms"
        }
        if report.stoppedBy == nil, let inflater {
            do { try inflater.finish() } catch let error as RegionKitError { report.stoppedBy = error } catch {}
        }
        if let inflater {
            report.trailingBytes = inflater.trailingBytes
            report.trailingOffset = inflater.trailingOffset
            report.trailingIsGarbage = inflater.trailingIsGarbage
        }
        if report.stoppedBy == nil {
            do { try splitter.finish() } catch let error as RegionKitError { report.stoppedBy = error } catch {}
        }
        report.skippedBytes = splitter.skippedBytes
        if let skip = splitter.firstSkip, skip.offset < report.firstSkipOffset ?? .max {
            // The skipped bytes came before the first damaged sighting.
            report.note(skip: RegionKitError(.malformedInput, "\(splitter.source): \(skip.reason)"), at: skip.offset)
        }
        return sightings.isEmpty ? nil : sightings
    }
}
