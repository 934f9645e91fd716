import Foundation

/// The ASCII spellings a record line is made of, appended to the line's bytes without a `String`
/// made of them: an integer's digits (`String(number)`) and a UUID's text (`uuidString`), byte
/// for byte what those write (`ASCIISpellingTests` compares them; base64 is `Base64Text`'s).
///
/// Why by hand: export writes one of these for nearly every value of every record. Foundation's
/// `uuidString` on Linux formats through `snprintf` (6,000 instructions a UUID), and each makes
/// a `String` that is then copied into the line: together with base64's (`Base64Text`), a fifth
/// of the encoder's instructions for another app's recipes.
package enum ASCIISpelling {
    /// The decimal digits of `number`, a `-` first when it is negative: `String(number)`.
    package static func appendInteger(_ number: Int64, to output: inout [UInt8]) {
        if number < 0 { output.append(UInt8(ascii: "-")) }
        // The magnitude, unsigned: Int64.min has one more than Int64.max.
        var magnitude = number.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// A UUID of these 16 bytes as `uuidString` spells it: upper-case hexadecimal digits in
    /// groups of 8, 4, 4, 4 and 12 joined by `-`.
    package static func appendUUID(_ bytes: UnsafeRawBufferPointer, to output: inout [UInt8]) {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        let hex = upperHexDigits.utf8Start
        // Written into a buffer and appended once: an append per byte checked the line's
        // capacity and uniqueness for each.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 36) { text in
            var position = 0
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 {
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
}
