import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class DateTextTests: XCTestCase {
    func testKnownDates() {
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: 0), "2001-01-01T00:00:00Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: -978_307_200), "1970-01-01T00:00:00Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: -31_536_000.25), "2000-01-01T23:59:59.75Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: -31_622_400.25), "1999-12-31T23:59:59.75Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: 762_505_200.5), "2025-03-01T07:00:00.5Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: 0.1 + 0.2), "2001-01-01T00:00:00.30000000000000004Z")
        XCTAssertEqual(DateText.iso8601(secondsSinceReferenceDate: -0.1), "2000-12-31T23:59:59.9Z")
        XCTAssertEqual(DateText.secondsSinceReferenceDate(iso8601: "2000-02-29T12:00:00Z"), -26_481_600)
    }

    func testRoundTripsTheExactBitPattern() {
        var random = SeededGenerator(seed: 42)
        var values: [Double] = [
            0, -0.1, 1e-7, -1e-7, 0.000_001, 1e10 + 0.5, -1e9, 123_456_789.987_654, -31_536_000.25, 762_505_200.000_001,
        ]
        for _ in 0..<5000 {
            values.append(Double.random(in: -2e9...2e9, using: &random))
            values.append(Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000)
        }
        for value in values {
            guard let text = DateText.iso8601(secondsSinceReferenceDate: value) else {
                XCTFail("\(value) has no ISO form")
                continue
            }
            let parsed = DateText.secondsSinceReferenceDate(iso8601: text)
            XCTAssertEqual(parsed?.bitPattern, value.bitPattern, "\(value) -> \(text) -> \(String(describing: parsed))")
        }
    }

    func testValuesWithoutAnISOFormAreRefusedNotRounded() {
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: .infinity))
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: .nan))
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: 1e300))
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: -1e-300))
        // Just below Int64's range: once an overflow trap in the whole-seconds arithmetic.
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: 9.2233720365e18))
        XCTAssertNil(DateText.iso8601(secondsSinceReferenceDate: -9.2233720365e18))
    }

    func testMalformedTextIsRejected() {
        for text in [
            "", "2001-01-01", "2001-13-01T00:00:00Z", "2001-02-30T00:00:00Z", "2001-01-01T24:00:00Z", "2001-01-01T00:00:00.Z",
            "2001-01-01T00:00:00+01:00", "2001-01-01T00:00:00.1aZ", "x001-01-01T00:00:00Z",
        ] {
            XCTAssertNil(DateText.secondsSinceReferenceDate(iso8601: text), text)
        }
    }
}
