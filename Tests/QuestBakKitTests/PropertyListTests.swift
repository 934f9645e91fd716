import Foundation
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class PropertyListTests: XCTestCase {
    let sample: PropertyListValue = .dictionary([
        "text": .string("plain"), "unicode": .string("café ☀️ 日本"), "empty": .string(""),
        "numbers": .array([
            .integer(0), .integer(255), .integer(256), .integer(70_000), .integer(5_000_000_000), .integer(-1), .integer(Int64.min),
        ]),
        "real": .real(0.1), "flag": .boolean(true), "off": .boolean(false),
        "blob": .data(Data((0..<40).map { UInt8($0) })), "uid": .uid(300),
        "long": .string(String(repeating: "x", count: 300)),
    ])

    func testRoundTrip() throws {
        XCTAssertEqual(try BinaryPropertyList.decode(BinaryPropertyList.encode(sample)), sample)
    }

    func testEncodingIsDeterministic() {
        XCTAssertEqual(BinaryPropertyList.encode(sample), BinaryPropertyList.encode(sample))
    }

    /// Foundation's own reader, a second implementation, must accept what we write.
    func testFoundationReadsWhatWeWrite() throws {
        let metadata = StoreMetadata(declaration: TimeQuestSchemas.v2, uuid: "ABC")
        let parsed =
            try PropertyListSerialization.propertyList(from: BinaryPropertyList.encode(metadata.plist), format: nil) as? [String: Any]
        XCTAssertEqual(parsed?["NSStoreType"] as? String, "SQLite")
        XCTAssertEqual(parsed?["NSStoreModelVersionIdentifiers"] as? [String], ["2.0.0"])
        XCTAssertEqual(
            (parsed?["NSStoreModelVersionHashes"] as? [String: Data])?["Routine"],
            ModelVersionHashes(declaration: TimeQuestSchemas.v2).entityHashes["Routine"])
        XCTAssertEqual((parsed?["NSStoreModelVersionHashesVersion"] as? NSNumber)?.intValue, 3)
        XCTAssertEqual(parsed?["_NSAutoVacuumLevel"] as? String, "2")
    }

    func testDamagedInputThrowsInsteadOfCrashing() {
        let encoded = BinaryPropertyList.encode(sample)
        for length in stride(from: 0, to: encoded.count, by: 3) {
            XCTAssertThrowsError(try BinaryPropertyList.decode(encoded.prefix(length)), "prefix \(length)")
        }
        var random = SeededGenerator(seed: 7)
        for _ in 0..<2000 {
            var damaged = [UInt8](encoded)
            damaged[Int.random(in: 8..<damaged.count, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
            _ = try? BinaryPropertyList.decode(Data(damaged))  // must return or throw, never trap
        }
    }

    func testArraysArchiveLikeNSKeyedArchiver() throws {
        let archived = TransformableArray.archive([.integer(2), .integer(3), .integer(2)])
        let root = try BinaryPropertyList.decode(archived)
        XCTAssertEqual(root["$archiver"], .string("NSKeyedArchiver"))
        XCTAssertEqual(root["$top"], .dictionary(["root": .uid(1)]))
        guard case .array(let objects)? = root["$objects"] else { return XCTFail("no $objects") }
        // Equal numbers share one object, as NSKeyedArchiver does with tagged NSNumbers.
        XCTAssertEqual(
            objects,
            [
                .string("$null"),
                .dictionary(["NS.objects": .array([.uid(2), .uid(3), .uid(2)]), "$class": .uid(4)]),
                .integer(2), .integer(3),
                .dictionary(["$classname": .string("NSArray"), "$classes": .array([.string("NSArray"), .string("NSObject")])]),
            ])
        XCTAssertEqual(try TransformableArray.unarchive(archived), [.integer(2), .integer(3), .integer(2)])
    }

    /// An archive written by Python's plistlib with another object order and class.
    func testReadsKeyedArchivesFromOtherWriters() throws {
        let foreign = Data(
            base64Encoded:
                "YnBsaXN0MDDUAQIDBAUGGRxZJGFyY2hpdmVyWCRvYmplY3RzVCR0b3BYJHZlcnNpb25fEA9OU0tleWVkQXJjaGl2ZXKlBwgJEBhVJG51bGwQB9IKCwwNWCRjbGFzc2VzWiRjbGFzc25hbWWjDQ4PXk5TTXV0YWJsZUFycmF5V05TQXJyYXlYTlNPYmplY3TSERITFFYkY2xhc3NaTlMub2JqZWN0c4ACoxUWF4ABgASAARP//////////tEaG1Ryb290gAMSAAGGoAgRGyQpMkRKUFJXYGtvfoaPlJumqKyusLK7vsPFAAAAAAAAAQEAAAAAAAAAHQAAAAAAAAAAAAAAAAAAAMo="
        )!
        XCTAssertEqual(try TransformableArray.unarchive(foreign), [.integer(7), .integer(-2), .integer(7)])
    }

    func testReadsJSONArraysToo() throws {
        XCTAssertEqual(
            try TransformableArray.unarchive(Data("[1,2,9007199254740993]".utf8)),
            [.integer(1), .integer(2), .integer(9_007_199_254_740_993)])
        XCTAssertEqual(try TransformableArray.unarchive(Data(#"["Grapefruit","Anise"]"#.utf8)), [.string("Grapefruit"), .string("Anise")])
        XCTAssertThrowsError(try TransformableArray.unarchive(Data("{}".utf8)))
    }
}
