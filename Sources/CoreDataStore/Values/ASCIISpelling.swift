import Foundation

/// The ASCII spellings a record line is made of, appended to the line's bytes without a `String`
/// made of them: an integer's digits here, byte for byte what `String(number)` writes
/// (`ASCIISpellingTests` compares them). A UUID's text is written beside its reader
/// (`UUID.appendText(of:to:)`, UUIDBytes.swift), base64 by `Base64Text`.
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
}
