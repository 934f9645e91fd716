import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// JSON attacks inside entity members, through the import that parses them: each must end in
/// a typed error naming the member, the line and, where there is one, the property; none may
/// crash, hang or write anything.
final class HostileRecordTests: XCTestCase {
    func importing(_ lines: [String], entity: String = "Routine", version: String = "2.0.0", rawMember: Data? = nil) throws -> Error? {
        let directory = try TemporaryTestDirectory()
        var builder = ArchiveBuilder(schemaVersion: version)
        builder.members = [.init(entity, records: lines)]
        if let rawMember {
            builder.members = [.init(entity, records: ["PLACEHOLDER"])]
            builder.damageMember = { _, data in data = rawMember }
            builder.editManifest = { manifest in
                var entities = manifest["entities"] as! [[String: Any]]
                entities[0]["bytes"] = rawMember.count
                entities[0]["sha256"] = rawMember.sha256Hex
                entities[0]["count"] = rawMember.split(separator: 0x0A).count - 1
                manifest["entities"] = entities
            }
        }
        let archive = directory.path("hostile.qbak")
        try builder.write(to: archive)
        let target = directory.path("out.store")
        var options = Importer.Options.timeQuest
        options.validate = true
        do {
            _ = try Importer.run(archive: archive.path, into: target, options: options, workDirectory: directory.url)
            return nil
        } catch {
            XCTAssertFalse(FileManager.default.fileExists(atPath: target.path), "nothing written on failure")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(".questbak-") }
            XCTAssertEqual(leftovers, [], "no temporary store left")
            return error
        }
    }

    func assertInvalidLine(_ error: Error?, line: Int, contains text: String, file: StaticString = #filePath, lineNumber: UInt = #line) {
        guard case ArchiveError.invalidLine(_, "entities/Routine.jsonl", let found, let reason)? = error else {
            return XCTFail("expected an invalid line, got \(String(describing: error))", file: file, line: lineNumber)
        }
        XCTAssertEqual(found, line, file: file, line: lineNumber)
        XCTAssertTrue(text.isEmpty || reason.contains(text), "\(reason)", file: file, line: lineNumber)
    }

    /// Every property of every entity, given a value of the wrong type, is refused by name.
    func testWrongTypesForEveryProperty() throws {
        for entity in TimeQuestSchemas.v2.entities {
            for attribute in entity.attributes {
                let wrong: Any
                switch attribute.kind {
                case .string, .uri, .uuid, .binary, .transformable: wrong = 5
                case .integer, .integer16, .integer32: wrong = "five"
                case .decimal: wrong = "five"
                case .boolean: wrong = "yes"
                case .composite, .objectID: continue
                case .double, .float: wrong = [1]
                case .date: wrong = true
                case .integerArray, .stringArray: wrong = "[1]"
                }
                let line = RecordLines.line(1, [attribute.name: wrong], [:])
                let error = try importing([line], entity: entity.name)
                guard case ArchiveError.invalidLine(_, let member, 2, let reason)? = error else {
                    XCTFail("\(entity.name).\(attribute.name): \(String(describing: error))")
                    continue
                }
                XCTAssertEqual(member, "entities/\(entity.name).jsonl")
                XCTAssertTrue(reason.hasPrefix("\(attribute.name) must be"), "\(entity.name).\(attribute.name): \(reason)")
            }
            for relationship in entity.toOneRelationships {
                let error = try importing([RecordLines.line(1, [relationship.name: "seven"], [:])], entity: entity.name)
                guard case ArchiveError.invalidLine(_, _, 2, let reason)? = error else { return XCTFail("\(String(describing: error))") }
                XCTAssertTrue(reason.contains("\(relationship.name) must be the _pk of a \(relationship.destination) or null"), reason)
            }
        }
    }

    func testMalformedJSON() throws {
        assertInvalidLine(try importing([#"{"_pk":1,"name":NaN}"#]), line: 2, contains: "not a JSON object")
        assertInvalidLine(try importing([#"{"_pk":1,"name":"a"} trailing"#]), line: 2, contains: "not a JSON object")
        assertInvalidLine(try importing(["[1,2,3]"]), line: 2, contains: "not a JSON object")
        assertInvalidLine(try importing([#"{"name":"no key"}"#]), line: 2, contains: "_pk must be an integer")
        assertInvalidLine(try importing([#"{"_pk":"4"}"#]), line: 2, contains: "_pk must be an integer")
        assertInvalidLine(
            try importing([#"{"_pk":1,"orderIndex":99999999999999999999999}"#], entity: "Routine"), line: 2,
            contains: "unknown property orderIndex")
        assertInvalidLine(try importing([#"{"_pk":1,"isActive":1e999999}"#]), line: 2, contains: "")
        assertInvalidLine(
            try importing([#"{"_pk":1,"colour":"red"}"#]), line: 2, contains: "unknown property colour for Routine in schema 2.0.0")
    }

    func testHugeNumbersDoNotBecomeOtherNumbers() throws {
        // An Int64 property given a number past Int64's range must be refused, not rounded.
        let error = try importing(
            [RecordLines.line(1, [:], [:]).replacingOccurrences(of: "\"_pk\":1", with: "\"_pk\":1,\"xpEarned\":99999999999999999999")],
            entity: "GameSession")
        guard case ArchiveError.invalidLine(_, _, 2, let reason)? = error else { return XCTFail("\(String(describing: error))") }
        XCTAssertTrue(reason.contains("xpEarned must be an integer"), reason)
    }

    func testInvalidUTF8() throws {
        var member = Data(#"{"schemaVersion":"2.0.0","entity":"Routine","count":1}"#.utf8) + Data([0x0A])
        member += Data(#"{"_pk":1,"name":""#.utf8) + Data([0xC3, 0x28, 0xFF]) + Data("\"}\n".utf8)
        assertInvalidLine(try importing([], rawMember: member), line: 2, contains: "not a JSON object")
    }

    func testDeeplyNestedValues() throws {
        let depth = 100_000
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        assertInvalidLine(try importing([#"{"_pk":1,"activeDays":"# + nested + "}"]), line: 2, contains: "")
    }

    func testAHundredMegabyteLineIsRefusedByTheLineLimit() throws {
        var member = Data(#"{"schemaVersion":"2.0.0","entity":"Routine","count":1}"#.utf8) + Data([0x0A])
        member += Data(#"{"_pk":1,"name":""#.utf8) + Data(repeating: UInt8(ascii: "a"), count: 100 << 20) + Data("\"}\n".utf8)
        assertInvalidLine(try importing([], rawMember: member), line: 2, contains: "longer than 67108864 bytes")
    }
}

extension Data {
    var sha256Hex: String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        let data = self
        DispatchQueue.global().async {
            input.fileHandleForWriting.write(data)
            try? input.fileHandleForWriting.close()
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }
}
