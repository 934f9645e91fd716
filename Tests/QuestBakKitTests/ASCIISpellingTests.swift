import Foundation
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures

/// Integers, UUIDs and base64 are written into a line's bytes by hand (`ASCIISpelling`): the
/// bytes must be those of the `String`s Swift and Foundation make of them, which lines held before.
final class ASCIISpellingTests: XCTestCase {
    func testAnIntegersDigitsAreItsString() {
        var random = SeededGenerator(seed: 33)
        var numbers: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 32_767, -32_768, .max, .min, .max - 1, .min + 1]
        for power in 0..<19 {
            let ten = Int64(pow(10, Double(power)))
            numbers += [ten, ten - 1, -ten, -ten + 1]
        }
        for _ in 0..<20_000 {
            numbers.append(Int64.random(in: .min ... .max, using: &random))
            numbers.append(Int64.random(in: -100_000...100_000, using: &random))
        }
        for number in numbers {
            var bytes: [UInt8] = Array("prefix".utf8)
            ASCIISpelling.appendInteger(number, to: &bytes)
            XCTAssertEqual(bytes, Array("prefix\(number)".utf8))
            var json: [UInt8] = []
            ValueJSON.append(.integer(number), to: &json)
            XCTAssertEqual(json, Array(String(number).utf8))
        }
    }

    func testAUUIDsTextIsItsUUIDString() {
        var random = SeededGenerator(seed: 34)
        var uuids = [UUID(), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        uuids.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for _ in 0..<5_000 {
            uuids.append(UUID(bytes: (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }, version: 4))
            var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &raw) { for index in 0..<16 { $0[index] = UInt8.random(in: 0...255, using: &random) } }
            uuids.append(UUID(uuid: raw))
        }
        for uuid in uuids {
            var bytes: [UInt8] = []
            ValueJSON.append(.uuid(uuid), to: &bytes)
            XCTAssertEqual(bytes, Array("\"\(uuid.uuidString)\"".utf8))
        }
    }

    /// Every length up to 100 (each remainder of three, each padding), of random bytes and of
    /// bytes that use the alphabet's last digits (`+`, `/`).
    func testBytesInBase64AreTheirBase64EncodedString() {
        var random = SeededGenerator(seed: 35)
        var samples: [Data] = [Data(), Data(repeating: 0xFF, count: 7), Data(repeating: 0xFB, count: 9), Data(repeating: 0, count: 5)]
        for count in 0...100 {
            for _ in 0..<20 { samples.append(Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &random) })) }
        }
        for bytes in samples {
            var json: [UInt8] = []
            ValueJSON.append(.binary(bytes), to: &json)
            XCTAssertEqual(json, Array("\"\(bytes.base64EncodedString())\"".utf8))
            var text: [UInt8] = []
            ValueJSON.append(.textBytes(bytes), to: &text)
            XCTAssertEqual(text, Array("{\"textBytes\":\"\(bytes.base64EncodedString())\"}".utf8))
        }
    }
}
