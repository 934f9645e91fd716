import Foundation
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures
@testable import QuestBakKit

/// The numbers a line holds are read from its bytes (`DecimalText`), no longer through a
/// `String` given to `Int64(_:)` and `Double(_:)`. These compare the two over boundaries and
/// many generated numbers: the same values, bit for bit, the same nils, and for whole lines the
/// same values and the same refusals as the reading through `String` (kept here as the
/// reference).
final class DecimalTextTests: XCTestCase {
    /// Integers at and past Int64's ends, and every length of digits around them.
    static func integerTexts() -> [String] {
        var texts = [
            "0", "1", "-1", "9", "-9", "10", "-10", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "-9223372036854775809", "9223372036854775810", "-9223372036854775810", "18446744073709551615",
            "18446744073709551616", "99999999999999999999", "-99999999999999999999", "100000000000000000000",
            "922337203685477580", "-922337203685477580", "92233720368547758070", "-92233720368547758080",
            String(repeating: "9", count: 400), "-" + String(repeating: "1", count: 40),
        ]
        var random = SeededGenerator(seed: 26)
        for digits in 1...21 {
            for _ in 0..<60 {
                let first = "123456789".randomElement(using: &random)!
                let rest = (1..<digits).map { _ in "0123456789".randomElement(using: &random)! }
                let text = String(first) + String(rest)
                texts.append(text)
                texts.append("-" + text)
            }
        }
        for _ in 0..<3000 {
            texts.append(String(Int64.random(in: .min ... .max, using: &random)))
        }
        return texts
    }

    /// JSON numbers with a fraction or an exponent: the ends of Double's range (the largest, the
    /// smallest subnormal, the halfway points below it, past either end), zeros of every sign,
    /// 17-digit mantissas, the spellings of random bit patterns, and numbers around the bounds of
    /// `DecimalText`'s short path.
    static func fractionalTexts() -> [String] {
        var texts = [
            "0.0", "-0.0", "0e0", "-0e0", "0.1", "-0.1", "0.2", "0.3", "1e308", "-1e308", "1.7976931348623157e308",
            "1.7976931348623158e308", "1.7976931348623159e308", "1e309", "-1e309", "1E400", "5e-324", "-5e-324", "4.9e-324",
            "2.4703282292062328e-324", "2.4703282292062327e-324", "2.5e-324", "2e-324", "3e-324", "1e-400", "-1e-400",
            "1.0e-999", "0.0e-999", "0e999", "2.2250738585072014e-308", "2.2250738585072011e-308", "1e-320",
            "9007199254740993.0", "9007199254740992.0", "9223372036854775807.0", "1e0", "1E+2", "1e-2", "12345678901234567e-5",
            "0." + String(repeating: "0", count: 330) + "1", "1." + String(repeating: "0", count: 800) + "1",
            String(repeating: "9", count: 310) + ".0", "0.30000000000000004", "123456789012345678901234567890e-10",
        ]
        var random = SeededGenerator(seed: 27)
        for _ in 0..<3000 {
            let digits = (0..<17).map { _ in "0123456789".randomElement(using: &random)! }
            let mantissa = String("123456789".randomElement(using: &random)!) + "." + String(digits.dropFirst())
            let exponent = Int.random(in: -340...320, using: &random)
            texts.append((Bool.random(using: &random) ? "-" : "") + mantissa + "e" + String(exponent))
            let bits = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &random))
            if bits.isFinite {
                texts.append("\(bits)".contains(where: { $0 == "." || $0 == "e" }) ? "\(bits)" : "\(bits).0")
                texts.append(String(format: "%.17e", bits))
            }
            texts.append("\(Double.random(in: -1e6...1e6, using: &random))")
            // Around the short path's bounds (15 significant digits, the point moved 22 places):
            // 1 to 17 digits, the point anywhere, exponents that move it up to 30 places.
            let count = Int.random(in: 1...17, using: &random)
            var short = (0..<count).map { _ in "0123456789".randomElement(using: &random)! }
            short[0] = "123456789".randomElement(using: &random)!  // no leading zero: JSON has none
            short.insert(".", at: Int.random(in: 1...count, using: &random))
            let spelled = String(short).hasSuffix(".") ? String(short) + "0" : String(short)
            texts.append(spelled + "e" + String(Int.random(in: -30...30, using: &random)))
            texts.append("-" + spelled)
        }
        for digits in ["1", "9", "123456789012345", "999999999999999", "9007199254740991", "9007199254740993"] {
            for exponent in [-24, -23, -22, -21, 21, 22, 23, 24] { texts.append(digits + "e" + String(exponent)) }
        }
        return texts
    }

    func testIntegersAreReadAsInt64ReadsTheirText() {
        var overflowed = 0
        for text in Self.integerTexts() {
            let read = Array(text.utf8).withUnsafeBufferPointer { DecimalText.int64($0) }
            XCTAssertEqual(read, Int64(text), text)
            if Int64(text) == nil { overflowed += 1 }
        }
        XCTAssertGreaterThan(overflowed, 50)
        XCTAssertEqual(Array("-9223372036854775808".utf8).withUnsafeBufferPointer { DecimalText.int64($0) }, .min)
        XCTAssertEqual(Array("9223372036854775807".utf8).withUnsafeBufferPointer { DecimalText.int64($0) }, .max)
    }

    func testDoublesAreReadAsDoubleReadsTheirTextBitForBit() {
        for text in Self.fractionalTexts() + Self.integerTexts() {
            let read = Array(text.utf8).withUnsafeBufferPointer { DecimalText.double($0) }
            XCTAssertEqual(read?.bitPattern, Double(text)?.bitPattern, text)
        }
        XCTAssertEqual(Array("5e-324".utf8).withUnsafeBufferPointer { DecimalText.double($0) }, .leastNonzeroMagnitude)
        XCTAssertEqual(Array("1e-400".utf8).withUnsafeBufferPointer { DecimalText.double($0) }?.bitPattern, 0)
        XCTAssertEqual(Array("-0.0".utf8).withUnsafeBufferPointer { DecimalText.double($0) }?.bitPattern, (-0.0).bitPattern)
        XCTAssertNil(Array("".utf8).withUnsafeBufferPointer { DecimalText.double($0) })
        XCTAssertNil(Array("1.5x".utf8).withUnsafeBufferPointer { DecimalText.double($0) })
    }

    /// How a line's number was read before it was read from the bytes: its text as a `String`,
    /// through `Int64(_:)` and `Double(_:)`, with the same refusals.
    enum Outcome: Equatable {
        case value(JSONValue)
        case refused(String)
    }

    static func numberReadThroughString(_ text: String) -> Outcome {
        let integral = !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
        if integral, text == "-0" { return .refused("n is -0, which no integer is (SQLite keeps no negative zero) at byte 6") }
        if integral, let integer = Int64(text) { return .value(.integer(integer)) }
        guard let number = Double(text), number.isFinite else { return .refused("number out of range at byte 6") }
        let mantissa = text.utf8.prefix { $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
        if number == 0, mantissa.contains(where: { (49...57).contains($0) }) {
            return .refused("n is \(text.prefix(40)), too small for a Double: it would be stored as 0 at byte 6")
        }
        return .value(.number(number))
    }

    func testALinesNumbersAreReadAndRefusedAsThroughAString() {
        let texts = Self.fractionalTexts() + Self.integerTexts() + ["-0", "0", "-0.0", "-0e5", "1e-400", "-1e-400", "1e999"]
        var refused = 0
        for text in texts {
            let found: Outcome
            do {
                found = .value(try JSONLine.parseObject(Data("{\"n\":\(text)}".utf8))[0].value)
            } catch {
                found = .refused("\(error)")
            }
            let expected = Self.numberReadThroughString(text)
            switch (found, expected) {
            case (.value(.number(let a)), .value(.number(let b))): XCTAssertEqual(a.bitPattern, b.bitPattern, text)
            default: XCTAssertEqual(found, expected, text)
            }
            if case .refused = expected { refused += 1 }
        }
        // The refusals are among the texts: -0, underflow to 0, past the largest Double.
        XCTAssertGreaterThan(refused, 10)
    }

    /// `DateText.secondsSinceReferenceDate(iso8601:)` as it was, spelling the seconds as a
    /// `String` for `Double(_:)`.
    static func secondsThroughString(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var result: Int64 = 0
            for index in range {
                guard (48...57).contains(bytes[index]) else { return nil }
                result = result * 10 + Int64(bytes[index] - 48)
            }
            return result
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let civil = CivilTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        var fraction = ""
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
            var digits = bytes[20..<(bytes.count - 1)]
            guard digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
            while digits.last == UInt8(ascii: "0") { digits.removeLast() }
            fraction = String(decoding: digits, as: UTF8.self)
        } else if bytes.count != 20 {
            return nil
        }
        let whole = civil.unixSeconds - DateText.referenceDateUnixOffset
        if whole >= 0 || fraction.isEmpty { return Double(fraction.isEmpty ? String(whole) : "\(whole).\(fraction)") }
        var complement = Array(fraction.utf8)
        for index in complement.indices {
            let digit = complement[index] - 48
            complement[index] = 48 + (index == complement.count - 1 ? 10 - digit : 9 - digit)
        }
        return Double("-\(-whole - 1).\(String(decoding: complement, as: UTF8.self))")
    }

    func testDatesAreReadAsThroughAString() {
        var random = SeededGenerator(seed: 28)
        var texts = [
            "2001-01-01T00:00:00Z", "2001-01-01T00:00:00.000Z", "2000-12-31T23:59:59.9Z", "1970-01-01T00:00:00.5Z",
            "1969-12-31T23:59:59.999999999999999999999Z", "0001-01-01T00:00:00.000001Z", "9999-12-31T23:59:59.999999Z",
            "1600-02-29T12:00:00.1000Z", "2001-01-01T00:00:00.0000000000000000000000001Z", "1900-01-01T00:00:00.0Z",
            "1999-12-31T23:59:59." + String(repeating: "3", count: 60) + "Z", "2001-01-01T00:00:00.Z", "2001-01-01T00:00:00.1aZ",
        ]
        for _ in 0..<4000 {
            let seconds = Double.random(in: -6.3e10...2.5e11, using: &random)
            if let text = DateText.iso8601(secondsSinceReferenceDate: seconds) { texts.append(text) }
            if let text = DateText.iso8601(secondsSinceReferenceDate: seconds.rounded()) { texts.append(text) }
            // Fractions as another writer may spell them: any length, trailing zeros.
            let whole = DateText.iso8601(secondsSinceReferenceDate: seconds.rounded(.down))!.dropLast()
            let digits = (0..<Int.random(in: 1...25, using: &random)).map { _ in "0123456789".randomElement(using: &random)! }
            texts.append(String(whole) + "." + String(digits) + (Bool.random(using: &random) ? "000Z" : "Z"))
        }
        for text in texts {
            XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: text)?.bitPattern, Self.secondsThroughString(text)?.bitPattern, text)
        }
        XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: "2000-12-31T23:59:59.9Z"), -0.1)
        XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: "1970-01-01T00:00:00.5Z"), -978_307_199.5)
    }
}
