import Foundation

/// Exact conversion between Core Data's stored dates (a Double of seconds since 2001) and UTC
/// ISO 8601 text.
///
/// The text carries the decimal digits of the shortest representation that round-trips the
/// Double, so parsing it gives back the identical bit pattern. All arithmetic is done on decimal
/// digit strings and integers: going through a second binary fraction would round twice.
package enum DateText {
    /// Seconds between 1970-01-01 and 2001-01-01.
    public static let referenceDateUnixOffset: Int64 = 978_307_200

    /// `nil` when the value cannot be written as an ISO date (not finite, outside years
    /// 0001–9999, or more fractional digits than fit an integer); callers then keep the number.
    public static func iso8601(secondsSinceReferenceDate seconds: Double) -> String? {
        var bytes: [UInt8] = []
        guard appendISO8601(secondsSinceReferenceDate: seconds, to: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the bytes of `iso8601(secondsSinceReferenceDate:)` to `output` and returns true,
    /// or appends nothing and returns false where that is nil: an export's dates go into its
    /// lines without a `String` made of each.
    public static func appendISO8601(secondsSinceReferenceDate seconds: Double, to output: inout [UInt8]) -> Bool {
        // Years 0001–9999 lie within ±3.2e11 seconds; anything beyond has no ISO form (and
        // would overflow the integer arithmetic below).
        guard seconds.isFinite, abs(seconds) < 4e11, let decimal = PlainDecimal(seconds) else { return false }
        var unixWhole: Int64
        var fraction = decimal.fraction
        if !decimal.isNegative {
            unixWhole = decimal.whole + referenceDateUnixOffset
        } else if fraction.isEmpty {
            unixWhole = referenceDateUnixOffset - decimal.whole
        } else {
            // -(w.f) = -(w + 1) + (1 - 0.f): the whole part floors, the fraction complements.
            // Longer fractions are written as the number (docs/archive-format.md).
            guard fraction.count <= 18, let complement = tenComplement(of: fraction) else { return false }
            unixWhole = referenceDateUnixOffset - decimal.whole - 1
            fraction = complement
        }
        guard let civil = CivilTime(unixSeconds: unixWhole), (1...9999).contains(civil.year) else { return false }
        // Digits by hand: String(format:) costs more than the rest of an export's row.
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                output.append(UInt8(48 + value / divisor % 10))
                divisor /= 10
            }
        }
        digits(civil.year, 4)
        output.append(UInt8(ascii: "-"))
        digits(civil.month, 2)
        output.append(UInt8(ascii: "-"))
        digits(civil.day, 2)
        output.append(UInt8(ascii: "T"))
        digits(civil.hour, 2)
        output.append(UInt8(ascii: ":"))
        digits(civil.minute, 2)
        output.append(UInt8(ascii: ":"))
        digits(civil.second, 2)
        if !fraction.isEmpty {
            output.append(UInt8(ascii: "."))
            output.append(contentsOf: fraction)
        }
        output.append(UInt8(ascii: "Z"))
        return true
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` back into seconds since 2001.
    public static func secondsSinceReferenceDate(iso8601 text: String) -> Double? {
        var text = text
        return text.withUTF8 { secondsSinceReferenceDate(iso8601: $0) }
    }

    /// `secondsSinceReferenceDate(iso8601:)` of the text's UTF-8 bytes.
    ///
    /// The seconds are spelled as a decimal (`whole.fraction`, the digits as written, or their
    /// complement before 1970's whole seconds) and read by the one decimal reader,
    /// `DecimalText.double`, which gives `Double(_:)`'s result: the spelling is built on the
    /// stack, not as a `String` (this took a twentieth of an import's reading thread).
    package static func secondsSinceReferenceDate(iso8601 bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var result: Int64 = 0
            for index in range {
                let byte = bytes[index]
                guard (48...57).contains(byte) else { return nil }
                result = result * 10 + Int64(byte - 48)
            }
            return result
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        // The fraction's digits, trailing zeros trimmed: `.000` is no fraction (before 2001 it
        // has no complement to take).
        var fraction = 20..<20
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            fraction = 20..<(bytes.count - 1)
            guard fraction.allSatisfy({ (48...57).contains(bytes[$0]) }) else { return nil }
            while !fraction.isEmpty, bytes[fraction.upperBound - 1] == UInt8(ascii: "0") {
                fraction = fraction.lowerBound..<(fraction.upperBound - 1)
            }
        } else if bytes.count != 20 {
            return nil
        }
        let whole = civil.unixSeconds - referenceDateUnixOffset
        // A sign, at most 19 digits, a point and the fraction.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21 + fraction.count) { literal in
            var length = 0
            func append(_ byte: UInt8) {
                literal[length] = byte
                length += 1
            }
            func appendDigits(of value: Int64) {
                let start = length
                var rest = value.magnitude
                repeat {
                    append(UInt8(48 + rest % 10))
                    rest /= 10
                } while rest > 0
                var (low, high) = (start, length - 1)
                while low < high {
                    literal.swapAt(low, high)
                    (low, high) = (low + 1, high - 1)
                }
            }
            if whole >= 0 || fraction.isEmpty {
                if whole < 0 { append(UInt8(ascii: "-")) }
                appendDigits(of: whole)
                if !fraction.isEmpty {
                    append(UInt8(ascii: "."))
                    for index in fraction { append(bytes[index]) }
                }
            } else {
                // -(w.f) written as -(w + 1) + (1 - 0.f), `tenComplement(of:)` in place: the
                // last digit d (not 0: the zeros are trimmed) becomes 10 − d, every digit before
                // it 9 − d; so the complement ends in a non-zero digit too.
                append(UInt8(ascii: "-"))
                appendDigits(of: -whole - 1)
                append(UInt8(ascii: "."))
                for index in fraction {
                    let digit = bytes[index] - UInt8(ascii: "0")
                    append(UInt8(ascii: "0") + (index == fraction.upperBound - 1 ? 10 - digit : 9 - digit))
                }
            }
            return DecimalText.double(UnsafeBufferPointer(rebasing: literal[..<length]))
        }
    }

    /// `1 - 0.f` as fractional digits (trailing zeros trimmed), for any number of digits: the
    /// last non-zero digit d becomes 10 − d, every digit before it 9 − d. `nil` when `f` is zero.
    private static func tenComplement(of fraction: [UInt8]) -> [UInt8]? {
        var digits = fraction
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard let last = digits.indices.last else { return nil }
        for index in digits.indices {
            let digit = digits[index] - UInt8(ascii: "0")
            digits[index] = UInt8(ascii: "0") + (index == last ? 10 - digit : 9 - digit)
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return digits
    }
}

/// A Double's shortest round-trip representation as sign, whole digits and fraction digits,
/// with any exponent notation expanded.
struct PlainDecimal {
    var isNegative: Bool
    var whole: Int64
    /// The fraction's digits, as ASCII bytes.
    var fraction: [UInt8]

    init?(_ value: Double) {
        // Works on the bytes of Swift's shortest representation ("-1.5e-07"): String indexing
        // would cost more than the whole conversion.
        var text: [UInt8] = []
        text.reserveCapacity(32)
        ShortestSpelling.append(value, to: &text)
        isNegative = text.first == UInt8(ascii: "-")
        if isNegative { text.removeFirst() }
        var exponent = 0
        if let e = text.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            guard let parsed = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) else { return nil }
            exponent = parsed
            text.removeSubrange(e...)
        }
        var digits = text
        var pointPosition = text.count
        if let point = text.firstIndex(of: UInt8(ascii: ".")) {
            digits.remove(at: point)
            pointPosition = point
        }
        pointPosition += exponent
        if pointPosition < 0 {
            digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: -pointPosition), at: 0)
            pointPosition = 0
        }
        if pointPosition > digits.count {
            digits.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: pointPosition - digits.count))
        }
        guard pointPosition <= 18 else { return nil }
        var whole: Int64 = 0
        for digit in digits[..<pointPosition] { whole = whole * 10 + Int64(digit - 48) }
        self.whole = whole
        var fractionEnd = digits.count
        while fractionEnd > pointPosition && digits[fractionEnd - 1] == UInt8(ascii: "0") { fractionEnd -= 1 }
        fraction = Array(digits[pointPosition..<fractionEnd])
        if whole == 0 && fraction.isEmpty { isNegative = false }
    }
}

/// Proleptic Gregorian calendar arithmetic in UTC (days-from-civil), without Foundation's
/// calendars, whose behaviour around 1582 and far-off years differs between platforms.
struct CivilTime {
    var year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64

    init?(year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64) {
        guard (1...12).contains(month), (1...CivilTime.daysIn(month: month, year: year)).contains(day),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        (self.year, self.month, self.day, self.hour, self.minute, self.second) = (year, month, day, hour, minute, second)
    }

    init?(unixSeconds: Int64) {
        let (days, remainder) = unixSeconds.floorDivided(by: 86_400)
        guard abs(days) < 10_000_000 else { return nil }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = remainder / 3600
        minute = remainder % 3600 / 60
        second = remainder % 60
    }

    var unixSeconds: Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

extension Int64 {
    func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        var quotient = self / divisor
        var remainder = self % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }
}
