import Foundation
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures

/// Doubles and dates are written into a line's bytes without a `String` made of each
/// (`ShortestSpelling`, `DateText.appendISO8601`): the bytes must be those the `String`s had.
final class ShortestSpellingTests: XCTestCase {
    static func doubles() -> [Double] {
        var random = SeededGenerator(seed: 26)
        var values: [Double] = [
            0, 1, -1, 0.1, 0.1 + 0.2, 1e-7, -1.5e-7, 1e16, 1e22, 123_456_789.987_654, 94.46693657219973, .leastNonzeroMagnitude,
            2.2250738585072014e-308, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.30000001192092896,
            Double(Float(0.1)), 9_007_199_254_740_992, 4e11, -4e11, 3.2e11,
        ]
        for _ in 0..<20_000 {
            values.append(Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &random)))
            values.append(Double.random(in: -2e9...2e9, using: &random))
            values.append(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000)
        }
        return values.filter(\.isFinite)
    }

    func testADoublesBytesAreItsInterpolation() {
        for value in Self.doubles() {
            var bytes: [UInt8] = Array("prefix".utf8)
            ShortestSpelling.append(value, to: &bytes)
            XCTAssertEqual(bytes, Array("prefix\(value)".utf8))
            XCTAssertEqual(String(decoding: bytes.dropFirst(6), as: UTF8.self), value.description)
        }
    }

    /// `ValueJSON` writes a date as its ISO text in quotes, and out of ISO's range as the number,
    /// as it wrote `DateText.iso8601`'s `String` (and the text is the one the code before wrote).
    func testADatesBytesAreItsISOTextOrItsNumber() {
        var checked = 0
        var numbers = 0
        for value in Self.doubles() + [-63_113_904_000, -63_113_904_001, 252_423_993_599.999, 252_423_993_600, -0.1, -1e-7] {
            var bytes: [UInt8] = [UInt8(ascii: "[")]
            ValueJSON.append(.date(value), to: &bytes)
            let expected: String
            if let text = PreviousDateText.iso8601(secondsSinceReferenceDate: value) {
                expected = "[\"\(text)\""
                XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: value), text)
                checked += 1
            } else {
                expected = "[\(value)"
                XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: value))
                numbers += 1
            }
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), expected)
        }
        XCTAssertGreaterThan(checked, 40_000)
        XCTAssertGreaterThan(numbers, 1_000)
    }
}

/// `DateText.iso8601` as it was before it wrote into bytes (commit e969070): the reference the
/// bytes are compared with.
private enum PreviousDateText {
    static func iso8601(secondsSinceReferenceDate seconds: Double) -> String? {
        guard seconds.isFinite, abs(seconds) < 4e11, let decimal = PreviousPlainDecimal(seconds) else { return nil }
        var unixWhole: Int64
        var fraction = decimal.fraction
        if !decimal.isNegative {
            unixWhole = decimal.whole + DateText.referenceDateUnixOffset
        } else if fraction.isEmpty {
            unixWhole = DateText.referenceDateUnixOffset - decimal.whole
        } else {
            guard fraction.utf8.count <= 18, let complement = tenComplement(of: fraction) else { return nil }
            unixWhole = DateText.referenceDateUnixOffset - decimal.whole - 1
            fraction = complement
        }
        guard let civil = CivilTime(unixSeconds: unixWhole), (1...9999).contains(civil.year) else { return nil }
        var bytes: [UInt8] = []
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(48 + value / divisor % 10))
                divisor /= 10
            }
        }
        digits(civil.year, 4)
        bytes.append(UInt8(ascii: "-"))
        digits(civil.month, 2)
        bytes.append(UInt8(ascii: "-"))
        digits(civil.day, 2)
        bytes.append(UInt8(ascii: "T"))
        digits(civil.hour, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(civil.minute, 2)
        bytes.append(UInt8(ascii: ":"))
        digits(civil.second, 2)
        if !fraction.isEmpty {
            bytes.append(UInt8(ascii: "."))
            bytes.append(contentsOf: fraction.utf8)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    static func tenComplement(of fraction: String) -> String? {
        var digits = Array(fraction.utf8)
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard let last = digits.indices.last else { return nil }
        for index in digits.indices {
            let digit = digits[index] - UInt8(ascii: "0")
            digits[index] = UInt8(ascii: "0") + (index == last ? 10 - digit : 9 - digit)
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return String(decoding: digits, as: UTF8.self)
    }
}

private struct PreviousPlainDecimal {
    var isNegative: Bool
    var whole: Int64
    var fraction: String

    init?(_ value: Double) {
        var text = Array("\(value)".utf8)
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
        fraction = String(decoding: digits[pointPosition..<fractionEnd], as: UTF8.self)
        if whole == 0 && fraction.isEmpty { isNegative = false }
    }
}
