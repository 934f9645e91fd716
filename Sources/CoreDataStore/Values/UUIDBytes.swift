import Foundation

extension UUID {
    /// A UUID of the RFC 4122 variant and the given version from the first 16 of `bytes`: the
    /// version and variant bits are set, the rest kept.
    package init(bytes: [UInt8], version: UInt8) {
        var b = Array(bytes.prefix(16)) + Array(repeating: 0, count: max(0, 16 - bytes.count))
        b[6] = b[6] & 0x0F | version << 4
        b[8] = b[8] & 0x3F | 0x80
        self.init(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
