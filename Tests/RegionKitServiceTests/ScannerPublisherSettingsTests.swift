import Logging
import RegionKitCore
import Testing
@testable import RegionKitService

/// What a scanner publisher refuses before it connects.
@Suite("Scanner publisher: settings refused up front")
struct ScannerPublisherSettingsTests {
    static func refusal(scanner: String = "kitchen", batchInterval: Duration = .milliseconds(100)) -> String? {
        do {
            _ = try ScannerPublisher(url: "mqtt://127.0.0.1:1", scanner: scanner, batchInterval: batchInterval, logger: Logger(label: "test"), environment: [:])
            return nil
        } catch let error as RegionKitError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("A scanner name the hub would refuse, and a batch interval longer than a second (a hub drops sightings more than 2 s old), are refused naming why")
    func refused() {
        #expect(Self.refusal() == nil)
        #expect(Self.refusal(batchInterval: .seconds(1)) == nil)
        #expect(Self.refusal(scanner: "")?.contains("--scanner is empty") == true)
        #expect(Self.refusal(scanner: "a\nb")?.contains("--scanner contains the control character U+000A") == true)
        #expect(Self.refusal(batchInterval: .seconds(5))?.contains("the batch interval must be within") == true)
        #expect(Self.refusal(batchInterval: .zero)?.contains("the batch interval must be within") == true)
    }
}
