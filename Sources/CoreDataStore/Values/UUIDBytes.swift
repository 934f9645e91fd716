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

/// A UUID's text both ways, by hand, in one place: hexadecimal digits in groups of 8, 4, 4, 4
/// and 12 joined by `-`. Foundation on Linux reads it through sscanf, from a `String` made first,
/// and writes it (`uuidString`) through snprintf, about 6,000 instructions a UUID; export writes
/// one and import reads one for nearly every UUID value and cloudID.
extension UUID {
    /// Whether the text has a `-` before the digits of the byte at `index` (0 to 15): the groups
    /// have an even number of digits, so a byte's pair of digits never spans a dash.
    private static func textHasDash(beforeByte index: Int) -> Bool {
        index == 4 || index == 6 || index == 8 || index == 10
    }

    /// The text of a UUID of these 16 bytes as `uuidString` spells it (upper-case digits),
    /// appended to `output`.
    package static func appendText(of bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        let hex = upperHexDigits.utf8Start
        // Written into a buffer and appended once: an append per byte checked the line's
        // capacity and uniqueness for each.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            var position = 0
            for index in 0..<16 {
                if textHasDash(beforeByte: index) {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                text[position] = hex[Int(bytes[index] >> 4)]
                text[position + 1] = hex[Int(bytes[index] & 0x0F)]
                position += 2
            }
            output.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    private static let upperHexDigits: StaticString = "0123456789ABCDEF"

    /// The UUID a text of 36 bytes spells (hexadecimal digits in groups of 8, 4, 4, 4 and 12
    /// joined by `-`, either case), and whether its letters are all upper case, as `uuidString`
    /// writes them; nil for any other text. The one reading of that shape, for a cloudID's check
    /// (`DeterministicID.isWellFormed`) and an archive's UUID value (`ValueJSON.uuid(text:)`).
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
                if textHasDash(beforeByte: index) {
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
