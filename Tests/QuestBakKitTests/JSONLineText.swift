import Foundation

@testable import CoreDataStore

/// A line's JSON text written from its members, for the tests that read lines both ways (by
/// position and by name) and compare: each variant they make is written by this one writer.
enum JSONLineText {
    /// JSON text of members in their order (a composite's keys sorted), as a variant's line.
    static func text(_ members: [(key: String, value: JSONValue)]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (index, member) in members.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            ValueJSON.appendString(member.key, to: &bytes)
            bytes.append(UInt8(ascii: ":"))
            append(member.value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func append(_ value: JSONValue, to bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .boolean(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): bytes.append(contentsOf: String(number).utf8)
        case .number(let number): ValueJSON.appendDouble(number, to: &bytes)
        case .string(let text): ValueJSON.appendString(text, to: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                append(element, to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(contentsOf: text(members.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }).utf8)
        }
    }
}
