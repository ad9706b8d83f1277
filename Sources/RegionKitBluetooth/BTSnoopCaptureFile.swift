import Foundation
import RegionKitHCI
import RegionKitConcurrency

/// A btsnoop capture written to a file as it happens: datalink 1002 (H4), one record per packet
/// with the host's direction bits (bit 0 clear = host → controller, set = controller → host), so
/// `tshark -r FILE` and `btmon -r FILE` read it, also while it is still being written.
///
/// Each record goes to the file in one `write` as soon as it is recorded (no user-space
/// buffering), so a crash loses nothing already recorded; ``close()`` also syncs the file to disk.
/// Recording never throws: a write error is kept in ``writeError`` and later records are dropped
/// (the capture must not take the scanner down).
///
/// ```swift
/// let capture = try BTSnoopCaptureFile(path: "scan.btsnoop")
/// let scanner = BeaconScanner(specification: spec, manager: manager, capture: capture)
/// ...
/// await scanner.stop()
/// capture.close()      // then: tshark -r scan.btsnoop
/// ```
public final class BTSnoopCaptureFile: Sendable {
    private struct State {
        var handle: FileHandle?
        /// The file was created (at the first record), or closed before it.
        var opened = false
        var records = 0
        var writeError: BluetoothError?
    }

    public let path: String
    private let now: @Sendable () -> Int64
    private let state: LockedBox<State>

    /// Microseconds since the Unix epoch, from the real-time clock: what capture readers display.
    public static let wallClockMicroseconds: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Checks that `path` can be written; the file is created (or truncated) with its 16-byte
    /// btsnoop header at the first record, so a controller that never opens leaves an earlier
    /// capture at `path` as it was (it was truncated to its header before).
    /// - Parameter clock: the record timestamps, microseconds since the Unix epoch.
    public init(path: String, clock: @escaping @Sendable () -> Int64 = BTSnoopCaptureFile.wallClockMicroseconds) throws(BluetoothError) {
        let directory = (path as NSString).deletingLastPathComponent
        var isDirectory: ObjCBool = false
        let writable: Bool
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            writable = !isDirectory.boolValue && FileManager.default.isWritableFile(atPath: path)
        } else {
            // The parent must be a directory (a regular file passes isWritableFile).
            let parent = directory.isEmpty ? "." : directory
            writable = FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) && isDirectory.boolValue
                && FileManager.default.isWritableFile(atPath: parent)
        }
        guard writable else {
            throw BluetoothError(.captureFailed, "cannot create the capture file '\(path)' (does its directory exist, is it writable?)")
        }
        self.path = path
        self.now = clock
        state = LockedBox(State())
    }

    /// Creates the file with its header (at the first record).
    private func open(_ state: inout State) {
        state.opened = true
        guard FileManager.default.createFile(atPath: path, contents: Data(BTSnoopWriter.header(datalink: .h4))),
              let handle = FileHandle(forWritingAtPath: path) else {
            state.writeError = BluetoothError(.captureFailed, "cannot create the capture file '\(path)'; nothing is captured")
            return
        }
        do {
            try handle.seekToEnd()
            state.handle = handle
        } catch {
            try? handle.close()
            state.writeError = BluetoothError(.captureFailed, "cannot write the capture file '\(path)'; nothing is captured", cause: error)
        }
    }

    /// Records written so far.
    public var recordCount: Int { state.withLock { $0.records } }

    /// The first write failure, if any.
    public var writeError: BluetoothError? { state.withLock { $0.writeError } }

    /// Appends one record for `packet` travelling in `direction` (from the host's point of view).
    public func record(_ packet: H4Packet, direction: BTSnoopRecord.Direction) {
        let bytes = BTSnoopWriter.encode(BTSnoopRecord(packet: packet, direction: direction, unixMicroseconds: now()))
        state.withLock { state in
            if !state.opened { open(&state) }
            guard let handle = state.handle, state.writeError == nil else { return }
            do {
                try handle.write(contentsOf: bytes)
                state.records += 1
            } catch {
                state.writeError = BluetoothError(.captureFailed, "writing record \(state.records) to '\(path)' failed; the capture stops there", cause: error)
            }
        }
    }

    /// Syncs and closes the file; later records are ignored. Idempotent.
    public func close() {
        state.withLock { state in
            state.opened = true   // no file after a close
            guard let handle = state.handle else { return }
            try? handle.synchronize()
            try? handle.close()
            state.handle = nil
        }
    }

    deinit { close() }
}
