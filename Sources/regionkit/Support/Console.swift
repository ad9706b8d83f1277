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

    /// A line for people, on stdout, with its control characters made visible (`\u{1B}`): region
    /// identifiers and scanner names (anyone on the MQTT broker chooses those) would otherwise
    /// reach the terminal as escape sequences (retitling it, rewriting earlier lines) or as line
    /// breaks forging an event line. JSON output goes through ``line(_:)``: it has none raw.
    static func textLine(_ text: String) {
        line(visible(text))
    }

    /// `text` with C0 and C1 control characters and DEL written as `\u{XX}`, and the line and
    /// paragraph separators and bidirectional overrides and isolates (U+2028–U+202E,
    /// U+2066–U+2069: a name that reads differently from what it is) as `\u{XXXX}`, as the
    /// daemon's log does. With
    /// `keepingLineBreaks` (a message listing problems on lines of their own) a line feed stays,
    /// and the line after it is indented, so no part of a message can pass for a line of its own.
    static func visible(_ text: String, keepingLineBreaks: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if keepingLineBreaks && scalar == "\n" {
                result += "\n    "
            } else if isControl(scalar) {
                result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0x2028...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    static func error(_ text: String) {
        write("regionkit: error: \(visible(text, keepingLineBreaks: true))\n", to: STDERR_FILENO)
    }

    /// Something the user should know that does not stop the command (damaged input skipped, say).
    static func warning(_ text: String) {
        write("regionkit: warning: \(visible(text, keepingLineBreaks: true))\n", to: STDERR_FILENO)
    }

    /// Information about how the input was read (a polygon approximated, regions left out).
    static func note(_ text: String) {
        write("regionkit: note: \(visible(text, keepingLineBreaks: true))\n", to: STDERR_FILENO)
    }

    /// `text` on stderr as it is (progress, a summary line): unlike `FileHandle.write(_:)`, an
    /// error (stderr closed) never traps.
    static func status(_ text: String) {
        write(text, to: STDERR_FILENO)
    }

    /// A logger writing to stderr at `level` (for library components a command runs: an MQTT client,
    /// say, and the daemon), control characters escaped (``EscapingLogHandler``): log lines quote
    /// text from the network.
    static func logger(label: String, level: Logger.Level = .warning) -> Logger {
        var logger = Logger(label: label) { EscapingLogHandler(StreamLogHandler.standardError(label: $0)) }
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
            Console.error(error.detailedMessage)
            throw ExitCode(1)
        }
    }
}
