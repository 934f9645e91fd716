import Foundation

@testable import CoreDataStore
@testable import QuestBakArchive

/// Record lines taken apart, for the tests that read each line two ways (by position and by
/// name) and compare: TimeQuest's lines (`LegacyLineReadingTests`) and another app's
/// (`ModelLineDecoderTests`). The two readers of either must agree on every variant, so one
/// generator serves both.
enum LineVariants {
    typealias Members = [(key: String, value: JSONValue)]

    /// Values of every JSON type, and of the forms a reader tells apart within one: integers in
    /// and out of a small type's range, a double no Float holds, texts that are dates, special
    /// numbers and UUIDs, arrays of either element and order, objects a composite or
    /// `textBytes` would take.
    static let otherValues: [JSONValue] = [
        .null, .integer(7), .integer(-1), .integer(40_000), .number(2.5), .number(1e300), .string("x"),
        .string("2026-01-01T00:00:00Z"), .string("Infinity"), .string("8F2B6E9A-3C41-4D7E-9A0B-1C2D3E4F5A01"), .boolean(true),
        .array([.integer(1)]), .array([.integer(2), .integer(1)]), .array([.string("a")]), .object([:]),
        .object(["name": .string("y")]), .object(["textBytes": .string("/w==")]),
    ]

    /// What a composite's own values are replaced by: one of each scalar type.
    private static let compositeValues: [JSONValue] = [
        .null, .integer(7), .integer(-1), .number(2.5), .string("x"), .string("2026-01-01T00:00:00Z"),
    ]

    /// The line taken apart: each key dropped, renamed, upper-cased, swapped with the next,
    /// repeated with another value; each value replaced by values of every other type; each
    /// composite with a key dropped, one added, and each of its values replaced; a key added
    /// first and last; `_opt` added where the line has none.
    static func of(_ members: Members) -> [Members] {
        var variants: [Members] = []
        for index in members.indices {
            var dropped = members
            dropped.remove(at: index)
            variants.append(dropped)
            var renamed = members
            renamed[index].key += "x"
            variants.append(renamed)
            var cased = members
            cased[index].key = cased[index].key.uppercased()
            variants.append(cased)
            if index + 1 < members.count {
                var swapped = members
                swapped.swapAt(index, index + 1)
                variants.append(swapped)
            }
            var repeated = members
            repeated.append((key: members[index].key, value: .integer(1)))
            variants.append(repeated)
            for other in otherValues {
                var replaced = members
                replaced[index].value = other
                variants.append(replaced)
            }
            if case .object(let inner) = members[index].value {
                for key in inner.keys.sorted() {
                    var without = inner
                    without.removeValue(forKey: key)
                    var replaced = members
                    replaced[index].value = .object(without)
                    variants.append(replaced)
                    for other in compositeValues {
                        var changed = inner
                        changed[key] = other
                        replaced[index].value = .object(changed)
                        variants.append(replaced)
                    }
                }
                var extra = inner
                extra["extra"] = .integer(1)
                var replaced = members
                replaced[index].value = .object(extra)
                variants.append(replaced)
            }
        }
        variants.append([(key: "extra", value: .integer(1))] + members)
        variants.append(members + [(key: "extra", value: .integer(1))])
        if !members.contains(where: { $0.key == RecordJSON.optKey }) {
            var withOpt = members
            withOpt.insert((key: RecordJSON.optKey, value: .integer(1)), at: min(1, members.count))
            variants.append(withOpt)
        }
        return variants
    }
}

extension LineVariants {
    /// The line's text spelled otherwise, and made hostile, for a reader by position, which
    /// compares bytes, to be checked against the general parse on lines whose text (not only
    /// members) differs: keys escaped, spelled in another normal form or cut, white space around
    /// the tokens, text after the object, a line cut short, a key twice, numbers past Int64 and
    /// Double, a negative zero, a leading zero, escaped and non-ASCII text, a raw control
    /// character, a lone surrogate, nesting, a date's `Z` in lower case, every letter's case.
    static func spellings(of line: String) -> [String] {
        let firstKey = line.range(of: "\"_pk\"")
        var variants: [String] = [
            line.replacingOccurrences(of: "\"_pk\"", with: #""\u005fpk""#),
            line.replacingOccurrences(of: "\"_opt\"", with: #""_op\u0074""#),
            line.replacingOccurrences(of: ",\"", with: " , \""),
            line.replacingOccurrences(of: ":", with: " :\t"),
            " \(line) ",
            "\n\(line)",
            "\(line)x",
            "\(line){}",
            String(line.dropLast()),
            String(line.prefix(line.count / 2)),
            line.replacingOccurrences(of: "}", with: ",}"),
            line.replacingOccurrences(of: "\"_pk\":", with: "\"_pk\":1,\"_pk\":"),
            line.replacingOccurrences(of: "\"_opt\":", with: "\"_opt\":null,\"_opt\":"),
            line.replacingOccurrences(of: "\"_pk\":", with: "\"_pk\":99999999999999999999,\"_x\":"),
            line.replacingOccurrences(of: ":1,", with: ":9223372036854775808,"),
            line.replacingOccurrences(of: ":1,", with: ":-9223372036854775809,"),
            line.replacingOccurrences(of: ":1,", with: ":1e400,"),
            line.replacingOccurrences(of: ":1,", with: ":1e-400,"),
            line.replacingOccurrences(of: ":1,", with: ":-0,"),
            line.replacingOccurrences(of: ":1,", with: ":-0.0,"),
            line.replacingOccurrences(of: ":1,", with: ":01,"),
            line.replacingOccurrences(of: ":1,", with: ":1.0,"),
            line.replacingOccurrences(of: ":null", with: ":nul"),
            line.replacingOccurrences(of: ":null", with: ":\"\""),
            line.replacingOccurrences(of: ":null", with: ":\"\\u00e9\\n\""),
            line.replacingOccurrences(of: ":null", with: ":\"é\""),
            line.replacingOccurrences(of: ":null", with: ":\"a\u{1}b\""),
            line.replacingOccurrences(of: ":null", with: ":\"\\ud800\""),
            line.replacingOccurrences(of: ":null", with: ":[[[[1]]]]"),
            line.replacingOccurrences(of: "\":\"", with: "\":\"\\/"),
            line.replacingOccurrences(of: "\":\"", with: "\":\"\u{7F}"),
            line.replacingOccurrences(of: "Z\"", with: "z\""),
            // A date's fraction with a trailing zero, and a fraction added: the same instant,
            // spelled as no export writes it.
            line.replacingOccurrences(of: "Z\"", with: "0Z\""),
            line.replacingOccurrences(of: ":00Z\"", with: ":00.000Z\""),
            line.replacingOccurrences(of: "e\"", with: "e\u{301}\""),
            line.lowercased(),
            line.uppercased(),
        ]
        if let firstKey {
            // The first key written in another normal form (`_pk` has none: a key with an accent).
            variants.append(line.replacingCharacters(in: firstKey, with: "\"é\""))
            variants.append(line.replacingCharacters(in: firstKey, with: "\"e\u{301}\""))
        }
        // The first key one letter longer: a key that begins with the expected one.
        if let colon = line.firstIndex(of: ":") {
            let quote = line.index(before: colon)
            variants.append("\(line[..<quote])k\(line[quote...])")
        }
        return variants
    }

    /// `count` lines made from `line` by a seeded generator: bytes flipped, dropped, repeated or
    /// replaced by one of the bytes JSON gives a meaning (quotes, brackets, separators, escapes,
    /// digits), one to three edits a line. Mostly lines neither reader accepts, at each byte.
    static func mutations(of line: String, count: Int, seed: UInt64) -> [[UInt8]] {
        var state = seed | 1
        func next(_ bound: Int) -> Int {
            // xorshift64*: deterministic and fast, so a failure names a line that comes again.
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return Int((state &* 0x2545_F491_4F6C_DD1D) >> 33) % max(bound, 1)
        }
        let meaningful = Array("\"\\{}[]:,0123456789-.eE+ntfu\u{7F} ".utf8) + [0x00, 0x0A, 0xC3, 0xA9, 0xFF]
        let original = Array(line.utf8)
        var lines: [[UInt8]] = []
        for _ in 0..<count {
            var bytes = original
            for _ in 0...next(3) where !bytes.isEmpty {
                let at = next(bytes.count)
                switch next(4) {
                case 0: bytes[at] ^= UInt8(1 << next(8))
                case 1: bytes.remove(at: at)
                case 2: bytes.insert(bytes[at], at: at)
                default: bytes[at] = meaningful[next(meaningful.count)]
                }
            }
            lines.append(bytes)
        }
        return lines
    }
}
