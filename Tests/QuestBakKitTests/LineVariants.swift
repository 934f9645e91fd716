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
