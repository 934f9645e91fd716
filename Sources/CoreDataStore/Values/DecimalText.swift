import SwiftShims

/// Numbers read straight from the ASCII bytes of a line, without a `String` made of each.
///
/// `JSONLine` made a `String` of every number and handed it to `Int64(_:)` or `Double(_:)`:
/// a third of its parse time at 100k records. These give the same results from the bytes. The
/// callers pass text of JSON's number grammar only (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`),
/// already checked, and keep every refusal (leading zeros, `-0`, out of range, underflow) of
/// their own.
package enum DecimalText {
    /// `Int64(text)` of an integer's digits (an optional `-`, then digits): the same value, and
    /// nil exactly where that is nil, past Int64's range either way.
    ///
    /// A negative number is summed downward, so that −2^63, whose magnitude is not an Int64,
    /// is read like every other; each step reports its overflow instead of trapping.
    package static func int64(_ digits: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let first = digits.first else { return nil }
        let isNegative = first == UInt8(ascii: "-")
        var index = isNegative ? 1 : 0
        guard index < digits.count else { return nil }
        var value: Int64 = 0
        while index < digits.count {
            let byte = digits[index]
            guard (48...57).contains(byte) else { return nil }
            let digit = Int64(byte &- 48)
            let (tenfold, tenfoldOverflow) = value.multipliedReportingOverflow(by: 10)
            let (next, nextOverflow) =
                isNegative ? tenfold.subtractingReportingOverflow(digit) : tenfold.addingReportingOverflow(digit)
            if tenfoldOverflow || nextOverflow { return nil }
            value = next
            index += 1
        }
        return value
    }

    /// `Double(text)` of a JSON number's bytes: the same Double, bit for bit, and nil exactly
    /// where that is nil.
    ///
    /// *Why the same.* `Double(_: String)` hands the string's NUL-terminated bytes to the
    /// runtime's `_swift_stdlib_strtod_clocale` (strtod with the C locale) and keeps its result
    /// when the whole text was read, nil otherwise (or when the text holds white space or a
    /// non-ASCII byte, which a JSON number never does). Here the same bytes, NUL-terminated on the
    /// stack, go to the same function, and its result is kept on the same condition.
    /// `DecimalTextTests` compares the two over boundaries and generated numbers.
    package static func double(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer in
            for index in 0..<text.count { buffer[index] = CChar(bitPattern: text[index]) }
            buffer[text.count] = 0
            let start = UnsafePointer(buffer.baseAddress!)
            var result: Double = 0
            guard let end = _swift_stdlib_strtod_clocale(start, &result), text.count > 0, end - start == text.count else {
                return nil
            }
            return result
        }
    }
}
