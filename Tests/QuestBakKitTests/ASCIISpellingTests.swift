import Foundation
import XCTest

@testable import CoreDataStore
@testable import QuestBakFixtures

/// Integers, UUIDs and base64 are written into a line's bytes by hand (`ASCIISpelling`,
/// `UUID.appendText(of:to:)`, `Base64Text`): the bytes must be those of the `String`s Swift and
/// Foundation make of them, which lines held before.
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
            // And the reader beside the writer reads it back, either case.
            let text = Array(bytes.dropFirst().dropLast())
            let upper = text.withUnsafeBytes { UUID.read(text: $0) }
            XCTAssertEqual(upper?.uuid, uuid)
            XCTAssertEqual(upper?.upperCase, true)
            let lower = Array(uuid.uuidString.lowercased().utf8).withUnsafeBytes { UUID.read(text: $0) }
            XCTAssertEqual(lower?.uuid, uuid)
            XCTAssertEqual(lower?.upperCase, uuid.uuidString.allSatisfy { !$0.isLetter })
        }
    }

    /// The reader takes only the writer's shape: every dash in its place, 32 hexadecimal digits.
    func testATextOfAnyOtherShapeIsNoUUID() {
        let good = Array("0123ABCD-4567-89EF-abcd-0123456789EF".utf8)
        XCTAssertNotNil(good.withUnsafeBytes { UUID.read(text: $0) })
        var shapes: [[UInt8]] = [Array(good.dropLast()), good + [UInt8(ascii: "0")], []]
        for dash in [8, 13, 18, 23] {
            for shift in [-1, 1] {
                var moved = good
                moved.swapAt(dash, dash + shift)
                shapes.append(moved)
            }
        }
        for position in good.indices {
            for byte in [UInt8(ascii: "g"), UInt8(ascii: "G"), UInt8(ascii: " "), UInt8(ascii: "-"), UInt8(ascii: "0")] {
                var changed = good
                changed[position] = byte
                // A digit for a digit, or the dash itself, keeps the shape.
                if byte == good[position] || (good[position] != UInt8(ascii: "-") && byte == UInt8(ascii: "0")) { continue }
                shapes.append(changed)
            }
        }
        for shape in shapes {
            XCTAssertNil(shape.withUnsafeBytes { UUID.read(text: $0) }, String(decoding: shape, as: UTF8.self))
        }
    }

    func testAnIntegerArraysTextIsItsNumbersJoined() {
        var random = SeededGenerator(seed: 36)
        var arrays: [[Int64]] = [[], [0], [.min, .max], [-1, 1, -10, 10]]
        for count in 0..<50 { arrays.append((0..<count).map { _ in Int64.random(in: .min ... .max, using: &random) }) }
        for numbers in arrays {
            var json: [UInt8] = []
            ValueJSON.append(.integerArray(numbers), to: &json)
            XCTAssertEqual(json, Array("[\(numbers.map(String.init).joined(separator: ","))]".utf8))
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
