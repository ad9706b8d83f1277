import FuzzSupport
import Foundation
import RegionKitCore
import RegionKitHTTP

/// `PUT /v1/regions/{id}` bodies. Input: the path's identifier, a newline, the JSON body.
/// Invariant: an accepted circular region respects the radius limit it was given.
enum HTTPRegionBodyFuzz {
    static func run(_ data: [UInt8]) {
        let newline = data.firstIndex(of: 0x0A) ?? data.endIndex
        let identifier = String(decoding: data[..<newline], as: UTF8.self)
        let body = Data(data[newline...].dropFirst())
        for limit in [nil, 500.0] {
            guard let region = try? RegionBody.region(identifier: identifier, json: body, maximumRadius: limit) else { continue }
            guard region.identifier == identifier else { FuzzTarget.fail("region \(region.identifier) for path id \(identifier)") }
            if case .circular(let circle) = region, let limit, !(circle.radius <= limit) {
                FuzzTarget.fail("radius \(circle.radius) accepted above the limit \(limit)")
            }
        }
    }
}
