import Foundation
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class JSONLineTests: XCTestCase {
    func parse(_ text: String) throws -> [(key: String, value: JSONValue)] {
        try JSONLine.parseObject(Data(text.utf8))
    }

    func testValues() throws {
        let members = try parse(
            #" {"a":null,"b":true,"c":false,"d":0,"e":9223372036854775807,"f":9223372036854775808,"g":1.5e-7,"h":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00","i":[1,[2,[]],{}],"j":{"k":"l"}} "#
        )
        XCTAssertEqual(members.map(\.key), ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"])
        XCTAssertEqual(
            members.map(\.value),
            [
                .null, .boolean(true), .boolean(false), .integer(0), .integer(Int64.max), .number(9_223_372_036_854_775_808),
                .number(1.5e-7), .string("x\"\\/\u{8}\u{C}\n\r\té😀"),
                .array([.integer(1), .array([.integer(2), .array([])]), .object([:])]),
                .object(["k": .string("l")]),
            ])
    }

    func testRefusals() {
        let refused: [String: String] = [
            #"{"a":1,"a":2}"#: "appears twice",
            #"{"a":NaN}"#: "unexpected character",
            #"{"a":Infinity}"#: "unexpected character",
            #"{"a":01}"#: "leading zero",
            #"{"a":1.}"#: "invalid number",
            #"{"a":1e999}"#: "out of range",
            // Numbers a store would give back as others: refused by their key.
            #"{"a":-0}"#: "a is -0",
            #"{"a":[1,1e-400]}"#: "a is 1e-400, too small for a Double",
            #"{"a":{"b":-1.0e-999}}"#: "b is -1.0e-999, too small",
            #"{"a":"\ud800"}"#: "lone surrogate",
            #"{"a":"\udc00"}"#: "lone surrogate",
            #"{"a":"\x"}"#: "invalid escape",
            "{\"a\":\"tab\there\"}": "control character",
            #"{"a":1} {}"#: "after the object",
            #"[1]"#: "expected an object",
            #"{"a":1"#: "expected ',' or '}'",
            #"{a:1}"#: "expected a key",
            #"{"a":tru}"#: "invalid literal",
            #"{"a":"open}"#: "unterminated",
            String(repeating: "[", count: 70).replacingOccurrences(of: "[", with: "[", options: [], range: nil).isEmpty
                ? "" : "{\"a\":" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70) + "}": "nested deeper than 64",
        ]
        // A key repeated among a record's first keys and among many (compared and hashed alike),
        // and keys that differ only past their first bytes or in length are different keys.
        let many = (0..<40).map { "\"key\($0)\":\($0)" }
        for repeated in [1, 15, 16, 17, 39] {
            let text =
                "{" + (many.prefix(repeated + 1) + ["\"key\(repeated)\":0"] + many.dropFirst(repeated + 1)).joined(separator: ",") + "}"
            XCTAssertThrowsError(try parse(text), "key\(repeated)") { error in
                XCTAssertTrue("\(error)".contains("key\(repeated)\" appears twice"), "\(error)")
            }
        }
        XCTAssertEqual(try parse("{" + many.joined(separator: ",") + "}").count, 40)
        XCTAssertEqual(try parse(#"{"ab":1,"abc":2,"ac":3,"b\u00e9":4,"be\u0301":5}"#).count, 5)
        for (text, reason) in refused {
            XCTAssertThrowsError(try parse(text), text) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(text): \(error)")
            }
        }
        XCTAssertThrowsError(try JSONLine.parseObject(Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]))) { error in
            XCTAssertTrue("\(error)".contains("invalid UTF-8"), "\(error)")
        }
    }

    /// Differential check against Foundation's parser on generated objects: same values, every time.
    func testAgreesWithFoundation() throws {
        var random = SeededGenerator(seed: 11)
        func value(_ depth: Int) -> Any {
            switch Int.random(in: 0..<(depth > 2 ? 5 : 7), using: &random) {
            case 0: return NSNull()
            case 1: return Bool.random(using: &random)
            case 2: return Int64.random(in: Int64.min...Int64.max, using: &random)
            case 3: return Double.random(in: -1e12...1e12, using: &random)
            case 4: return String((0..<Int.random(in: 0..<12, using: &random)).map { _ in "aé😀\"\\\n\t/€x".randomElement(using: &random)! })
            case 5: return (0..<Int.random(in: 0..<4, using: &random)).map { _ in value(depth + 1) }
            default:
                return Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0..<3, using: &random)).map { ("k\($0)", value(depth + 1)) })
            }
        }
        // The generated values are Swift values; Foundation writes them, this parser reads them back.
        func convert(_ any: Any) -> JSONValue {
            switch any {
            case let flag as Bool: return .boolean(flag)
            case let integer as Int64: return .integer(integer)
            case let number as Double: return .number(number)
            case let text as String: return .string(text)
            case let array as [Any]: return .array(array.map(convert))
            case let object as [String: Any]: return .object(object.mapValues(convert))
            default: return .null
            }
        }
        for _ in 0..<500 {
            let object = Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 1..<8, using: &random)).map { ("p\($0)", value(0)) })
            let data = try JSONSerialization.data(withJSONObject: object)
            let ours = Dictionary(uniqueKeysWithValues: try JSONLine.parseObject(data).map { ($0.key, $0.value) })
            for (key, original) in object {
                guard let found = ours[key] else { return XCTFail("missing \(key)") }
                XCTAssertTrue(Self.equivalent(convert(original), found), "\(key) in \(String(decoding: data, as: UTF8.self))")
            }
        }
    }

    /// Equal values; a Double Foundation wrote without a fraction ("5") may come back an integer.
    static func equivalent(_ expected: JSONValue, _ found: JSONValue) -> Bool {
        switch (expected, found) {
        case (.number(let a), .number(let b)): return a.bitPattern == b.bitPattern
        case (.number(let a), .integer(let b)): return a == Double(b)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { equivalent($0, $1) }
        case (.object(let a), .object(let b)):
            return a.keys.sorted() == b.keys.sorted() && a.allSatisfy { equivalent($0.value, b[$0.key]!) }
        default: return expected == found
        }
    }
}
