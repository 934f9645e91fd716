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

extension UUID {
    /// The UUID a text of 36 bytes spells (hexadecimal digits in groups of 8, 4, 4, 4 and 12
    /// joined by `-`, either case), and whether its letters are all upper case, as `uuidString`
    /// writes them; nil for any other text. The one reading of that shape, for a cloudID's check
    /// (`DeterministicID.isWellFormed`) and an archive's UUID value (`ValueJSON.uuid(text:)`),
    /// both on hot paths: by hand from the bytes, because Foundation's parser on Linux goes
    /// through sscanf and needs a `String` made first.
    package static func read(text bytes: UnsafeRawBufferPointer) -> (uuid: UUID, upperCase: Bool)? {
        guard bytes.count == 36 else { return nil }
        var upperCase = true
        func digit(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            case UInt8(ascii: "a")...UInt8(ascii: "f"):
                upperCase = false
                return byte - UInt8(ascii: "a") + 10
            default: return nil
            }
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let read = withUnsafeMutableBytes(of: &uuid) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                // The groups have an even number of digits: a pair never spans a dash.
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard bytes[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = digit(bytes[position]), let low = digit(bytes[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return read ? (UUID(uuid: uuid), upperCase) : nil
    }
}
