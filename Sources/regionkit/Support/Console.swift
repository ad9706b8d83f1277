import Foundation
import RegionKit
import ArgumentParser
import Logging

/// Shared output helpers: unbuffered lines on stdout; errors, warnings and notes on stderr
/// (`regionkit: error: …` with a non-zero exit, `regionkit: warning: …`, `regionkit: note: …`).
enum Console {
    static func line(_ text: String) {
        write(text + "\n", to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        write("regionkit: error: \(text)\n", to: STDERR_FILENO)
    }

    /// Something the user should know that does not stop the command (damaged input skipped, say).
    static func warning(_ text: String) {
        write("regionkit: warning: \(text)\n", to: STDERR_FILENO)
    }

    /// Information about how the input was read (a polygon approximated, regions left out).
    static func note(_ text: String) {
        write("regionkit: note: \(text)\n", to: STDERR_FILENO)
    }

    /// `text` on stderr as it is (progress, a summary line): unlike `FileHandle.write(_:)`, an
    /// error (stderr closed) never traps.
    static func status(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// A logger writing to stderr at `level` (for library components a command runs: an MQTT client, say).
    static func logger(label: String, level: Logger.Level = .warning) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        return logger
    }

    /// Writes straight to the file descriptor: no buffering, so piped JSON lines arrive at once.
    private static func write(_ text: String, to descriptor: Int32) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }

    /// Runs `body`, turning RegionKit errors into a message on stderr and exit status 1.
    static func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as RegionKitError {
            Console.error(error.message + (error.cause.map { " (\($0))" } ?? ""))
            throw ExitCode(1)
        }
    }
}
