import Testing
@testable import RegionKitHCI

/// Runs `body`, requiring it to throw an `HCIError` with `code` (and `offset`/`index` when given).
@discardableResult
func expectHCIError<T>(
    _ code: HCIError.Code, offset: Int? = nil, index: Int? = nil, messageContains: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> T
) -> HCIError? {
    do {
        let value = try body()
        Issue.record("expected \(code) but got \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as HCIError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        if let offset { #expect(error.offset == offset, "\(error)", sourceLocation: sourceLocation) }
        if let index { #expect(error.index == index, "\(error)", sourceLocation: sourceLocation) }
        if let messageContains {
            #expect(error.message.contains(messageContains), "\(error)", sourceLocation: sourceLocation)
        }
        return error
    } catch {
        Issue.record("expected HCIError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

extension H4Packet {
    /// Decodes an H4 event packet given with its type byte.
    static func event(_ bytes: [UInt8], layout: LEAdvertisingReportLayout = .fieldArrays) throws -> HCIEvent {
        try H4Packet(decoding: bytes).event(advertisingReportLayout: layout)
    }
}
