import FuzzSupport
import RegionKitCore

/// Beacon layout expressions (Android Beacon Library syntax, `BeaconLayout.init`) and decoding
/// arbitrary advertising data with the parsed layout. Input: one length byte N, N bytes of
/// expression (any bytes, invalid UTF-8 included), the rest advertising data.
///
/// Invariants: a refused expression is an `invalidArgument` error naming the layout; a parsed
/// layout's fields are within 0...254 with the matcher value as long as its range, a service UUID
/// is 16-bit, and its format follows its identifiers (and iBeacon's `02 15` in the matcher); a decode reads the structure at the offset it reports, of the layout's
/// AD type, with the matcher (and service UUID) bytes at their places, one value per identifier
/// and data field of the declared lengths, power only with a `p:` term; a decode error's offset
/// lies in the data; a region identity, when there is one, has the layout's format.
enum BeaconLayoutFuzz {
    static func run(_ input: [UInt8]) {
        guard let length = input.first else { return }
        let expressionBytes = Array(input.dropFirst().prefix(Int(length)))
        let data = Array(input.dropFirst(1 + expressionBytes.count))
        let expression = String(decoding: expressionBytes, as: UTF8.self)
        let layout: BeaconLayout
        switch Result(catching: { () throws(RegionKitError) in try BeaconLayout(expression) }) {
        case .success(let parsed): layout = parsed
        case .failure(let error):
            guard error.code == .invalidArgument, error.message.contains("beacon layout") else { FuzzTarget.fail("'\(expression)' refused with \(error)") }
            return
        }
        checkParsed(layout)
        switch Result(catching: { () throws(BeaconDecodingError) in try layout.decode(data) }) {
        case .success(let decoded): checkDecoded(decoded, layout, data)
        case .failure(let error):
            guard error.offset >= 0, error.offset <= data.count else { FuzzTarget.fail("error offset \(error.offset) outside \(data.count) bytes: \(error)") }
        }
    }

    static func checkParsed(_ layout: BeaconLayout) {
        let fields = [layout.matcher] + layout.identifiers + layout.dataFields + (layout.power.map { [$0] } ?? []) + (layout.serviceUUID.map { [$0.field] } ?? [])
        guard fields.allSatisfy({ 0 <= $0.start && $0.start <= $0.end && $0.end <= 254 }) else { FuzzTarget.fail("'\(layout)' has a field outside 0...254: \(fields)") }
        guard layout.matcherValue.count == layout.matcher.length, layout.serviceUUID.map({ $0.bytes.count == $0.field.length && $0.bytes.count == 2 }) ?? true else {
            FuzzTarget.fail("'\(layout)' matcher/service UUID value lengths differ from their ranges (or the service UUID is not 16-bit)")
        }
        guard layout.isExtraFrame || !layout.identifiers.isEmpty, layout.power.map({ $0.length == 1 }) ?? true,
              layout.dataFields.allSatisfy({ $0.length <= 8 }), (-127...127).contains(layout.powerCorrection) else {
            FuzzTarget.fail("'\(layout)' breaks the parser's own rules")
        }
        let lengths = layout.identifiers.map(\.length)
        let fixed = layout.identifiers.allSatisfy { !$0.variableLength }
        // 16+2+2 after iBeacon's 02 15 at manufacturer data bytes 2-3 is iBeacon, other 16+2+2 AltBeacon.
        let m = layout.matcher
        var iBeaconCode = false
        if layout.serviceUUID == nil, m.start <= 2, m.end >= 3, layout.matcherValue.count == m.length {
            iBeaconCode = layout.matcherValue[2 - m.start] == 0x02 && layout.matcherValue[3 - m.start] == 0x15
        }
        let expected: BeaconFormat? = fixed && lengths == [16, 2, 2] ? (iBeaconCode ? .iBeacon : .altBeacon) : fixed && lengths == [10, 6] ? .eddystoneUID : nil
        guard layout.format == expected else { FuzzTarget.fail("'\(layout)' has format \(String(describing: layout.format)), identifiers \(lengths)") }
    }

    static func checkDecoded(_ decoded: BeaconLayout.Decoded, _ layout: BeaconLayout, _ data: [UInt8]) {
        guard let structure = AdvertisingStructures.structure(at: decoded.offset, in: data), structure.count >= 2 else {
            FuzzTarget.fail("'\(layout)' decoded a structure at offset \(decoded.offset) the walk does not find")
        }
        let body = Array(structure.dropFirst(2))
        guard structure[1] == layout.adType, body.count >= layout.minimumLength else {
            FuzzTarget.fail("'\(layout)' decoded AD type \(structure[1]) with \(body.count) bytes")
        }
        guard Array(body[layout.matcher.start...layout.matcher.end]) == layout.matcherValue else { FuzzTarget.fail("'\(layout)' matcher not at its place in \(structure)") }
        if let service = layout.serviceUUID, Array(body[service.field.start...service.field.end]) != service.bytes {
            FuzzTarget.fail("'\(layout)' service UUID not at its place in \(structure)")
        }
        guard decoded.identifiers.count == layout.identifiers.count, decoded.dataFields.count == layout.dataFields.count,
              (decoded.measuredPower == nil) == (layout.power == nil) else {
            FuzzTarget.fail("'\(layout)' decoded \(decoded)")
        }
        for (field, value) in zip(layout.identifiers, decoded.identifiers) {
            let ok = field.variableLength ? (1...field.length).contains(value.count) : value.count == field.length
            guard ok else { FuzzTarget.fail("'\(layout)' identifier \(field) read \(value.count) bytes") }
            let raw = Array(body[field.start..<(field.start + value.count)])
            guard value == (field.littleEndian ? raw.reversed() : raw) else { FuzzTarget.fail("'\(layout)' identifier \(field) read \(value), the bytes are \(raw)") }
        }
        for (field, value) in zip(layout.dataFields, decoded.dataFields) where field.length < 8 {
            guard value >> (8 * field.length) == 0 else { FuzzTarget.fail("'\(layout)' data field \(field) read \(value)") }
        }
        if let identity = layout.identity(of: decoded), identity.format != layout.format {
            FuzzTarget.fail("'\(layout)' gave \(identity) but has format \(String(describing: layout.format))")
        }
    }
}
