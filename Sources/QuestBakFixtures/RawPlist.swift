import Foundation

/// Binary property lists built byte by byte, every trailer field open to override: for hostile
/// inputs in the fuzzer and the plist tests.
package enum RawPlist {
    package static func bigEndian(_ value: UInt64, width: Int) -> [UInt8] {
        (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    /// A bplist00 assembled from raw objects, every trailer field open to override.
    package static func assemble(
        _ objects: [[UInt8]], offsetWidth: Int = 1, referenceWidth: Int = 1, objectCount: UInt64? = nil,
        topObject: UInt64 = 0, offsetTable: UInt64? = nil, offsets: [UInt64]? = nil
    ) -> Data {
        var bytes = Array("bplist00".utf8)
        var positions: [UInt64] = []
        for object in objects {
            positions.append(UInt64(bytes.count))
            bytes += object
        }
        let table = UInt64(bytes.count)
        let entries = offsets ?? positions
        for offset in entries { bytes += bigEndian(offset, width: offsetWidth) }
        bytes += [0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: offsetWidth), UInt8(truncatingIfNeeded: referenceWidth)]
        bytes += bigEndian(objectCount ?? UInt64(entries.count), width: 8)
        bytes += bigEndian(topObject, width: 8)
        bytes += bigEndian(offsetTable ?? table, width: 8)
        return Data(bytes)
    }
}
