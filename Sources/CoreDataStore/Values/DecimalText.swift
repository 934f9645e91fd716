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
        if let exact = exactlyRoundedShortDecimal(text) { return exact }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer in
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

    /// A decimal of at most 15 significant digits whose point moves at most 22 places, computed
    /// as one multiplication or division of two exact Doubles; nil for any other text.
    ///
    /// *Why it is strtod's Double.* The digits make an integer m < 10^15 < 2^53, and 10^k for
    /// k ≤ 22 is below 2^53 · 2^22 with a power of two as factor 2^k and 5^k < 2^53: both are
    /// exact Doubles. IEEE 754 rounds the product m · 10^k and the quotient m / 10^k correctly
    /// (to nearest, ties to even), so the result is the Double nearest the decimal's value: what
    /// a correctly rounding strtod (glibc's, Darwin's) returns for the same text. The sign is
    /// applied after, and negation is exact (−0.0 stays negative, as strtod's). Clinger's fast
    /// path; `DecimalTextTests` compares it with `Double(_:)` bit for bit.
    private static func exactlyRoundedShortDecimal(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var index = 0
        let isNegative = index < text.count && text[index] == UInt8(ascii: "-")
        if isNegative { index += 1 }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var digitsSeen = 0
        var inFraction = false
        while index < text.count {
            let byte = text[index]
            if byte == UInt8(ascii: ".") {
                if inFraction { return nil }
                inFraction = true
            } else if (48...57).contains(byte) {
                digitsSeen += 1
                if mantissa != 0 || byte != 48 { significantDigits += 1 }
                if significantDigits > 15 { return nil }
                mantissa = mantissa * 10 + UInt64(byte - 48)
                if inFraction { fractionDigits += 1 }
            } else {
                break
            }
            index += 1
        }
        guard digitsSeen > 0 else { return nil }
        var exponent = 0
        if index < text.count {
            guard text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") else { return nil }
            index += 1
            var exponentIsNegative = false
            if index < text.count, text[index] == UInt8(ascii: "+") || text[index] == UInt8(ascii: "-") {
                exponentIsNegative = text[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < text.count else { return nil }
            while index < text.count {
                let byte = text[index]
                // Past four digits the point moves too far for this path in any case.
                guard (48...57).contains(byte), exponent < 10_000 else { return nil }
                exponent = exponent * 10 + Int(byte - 48)
                index += 1
            }
            if exponentIsNegative { exponent = -exponent }
        }
        let shift = exponent - fractionDigits
        guard (-22...22).contains(shift) else { return nil }
        let magnitude = shift >= 0 ? Double(mantissa) * powersOfTen[shift] : Double(mantissa) / powersOfTen[-shift]
        return isNegative ? -magnitude : magnitude
    }

    /// 10^0 through 10^22, each an exact Double.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
        1e21, 1e22,
    ]
}
