import Foundation
import Testing
import RegionKitCore

/// What a command prints for an error with a cause.
@Suite("RegionKitError: the message and its cause as a person reads them")
struct RegionKitErrorTests {
    struct Plain: Error, CustomStringConvertible {
        var description: String { "plain cause" }
    }

    @Test("A file-system error from Foundation reads as the system's reason, not the whole NSError dump; other causes as they describe themselves; a RegionKitError cause without its code")
    func detailedMessage() throws {
        let directory = FileManager.default.temporaryDirectory
        let readError: any Error
        do {
            _ = try Data(contentsOf: directory)
            Issue.record("a directory was read as a file")
            return
        } catch {
            readError = error
        }
        let error = RegionKitError(.malformedInput, "\(directory.path): cannot read the file", cause: readError)
        #expect(error.detailedMessage == "\(directory.path): cannot read the file (Is a directory)")
        #expect(error.description == "malformedInput: \(directory.path): cannot read the file (Is a directory)")
        #expect(RegionKitError(.invalidArgument, "x", cause: Plain()).detailedMessage == "x (plain cause)")
        #expect(RegionKitError(.invalidArgument, "x").detailedMessage == "x")
        let nested = RegionKitError(.invalidRegion, "inner", cause: Plain())
        #expect(RegionKitError(.malformedInput, "outer", cause: nested).detailedMessage == "outer (inner (plain cause))")
        // A failed read(2) (a gateway recording read from a pipe) thrown as a POSIX-domain NSError.
        #expect(RegionKitError(.malformedInput, "read error", cause: NSError(domain: NSPOSIXErrorDomain, code: Int(EIO))).detailedMessage
                == "read error (Input/output error)")
    }

    @Test("localizedDescription is the error's own description (it was Foundation's 'The operation could not be completed. (… error 1.)')")
    func localizedDescription() {
        let error: any Error = RegionKitError(.invalidRegion, "region 'door': proximity UUID 'nope' is not a UUID")
        #expect(error.localizedDescription == "invalidRegion: region 'door': proximity UUID 'nope' is not a UUID")
    }
}
