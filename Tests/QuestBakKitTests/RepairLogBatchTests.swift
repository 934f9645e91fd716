import CoreDataStore
import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// The log writes its entries many to a statement, reusing a text the entry before had, and
/// writes full batches in the background: what it reads back must be every entry, in order, as
/// recorded, whichever statement or batch it went in.
final class RepairLogBatchTests: XCTestCase {
    /// Entry `index` of a varied run: several entries per record, as a merge logs them (the
    /// record's cloudID shared, or none, or one cut at a NUL), fields and entities changing
    /// at odd places, values of every kind and now and then a whole record.
    private func entry(_ index: Int) -> RepairEntry {
        let record = index / 5
        let cloudID: String? =
            switch record % 4 {
            case 0: nil
            case 1: "2F537EDD-BFBC-4B98-A4F6-\(String(format: "%012d", record))"
            case 2: "cut\u{0}at a NUL \(record)"
            default: "\(record)"
            }
        let values: [ReportValue?] = [
            nil, .value(.null), .value(.integer(Int64(index))), .value(.double(Double(index) / 7)), .value(.string("text \"\(index)\"\n")),
            .value(.date(Double(index) * 60)), .value(.binary(Data([UInt8(index % 256), 0]))),
            .record(["name": .string("r\(index)"), "count": .integer(Int64(record))]),
        ]
        return RepairEntry(
            rule: [.conflict, .supersede, .fill, .insert][index % 7 % 4], kind: index % 11 == 0 ? .repair : .merge,
            entity: ["TaskEstimation", "GameSession", "Routine"][record / 3 % 3], primaryKey: Int64(record),
            cloudID: cloudID, field: index % 13 == 0 ? nil : "field\(index % 5)", old: values[index % values.count],
            new: values[(index / 3) % values.count])
    }

    /// What the log is to give back for an entry: its texts cut at a NUL, as they always were.
    private func logged(_ entry: RepairEntry) -> RepairLog.LoggedEntry {
        RepairLog.LoggedEntry(
            rule: entry.rule.rawValue, kind: entry.kind.rawValue, entity: entry.entity, primaryKey: entry.primaryKey,
            cloudID: entry.cloudID.map { String($0.prefix { $0 != "\u{0}" }) }, field: entry.field, old: entry.old?.json,
            new: entry.new?.json)
    }

    func testEveryEntryOfSeveralBatchesReadsBackInOrderAsRecorded() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        // Three full batches (two written in the background while the next was made) and a
        // last one of 7 entries: 64 to a statement, and 39 left over after the last full one.
        let count = 30_007
        for index in 0..<count { try log.record(entry(index)) }
        XCTAssertEqual(log.total, count)
        let read = try log.firstEntries(count + 1)
        XCTAssertEqual(read.count, count)
        for index in 0..<count where read[index] != logged(entry(index)) {
            XCTFail("entry \(index): \(read[index]), not \(logged(entry(index)))")
            break
        }
        var lines = 0
        try log.forEachEntryLine { _ in lines += 1 }
        XCTAssertEqual(lines, count)
    }

    func testAResetForgetsABatchStillBeingWritten() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        // The 10,000th entry hands its batch to the background; the reset comes at once.
        for index in 0..<10_000 { try log.record(entry(index)) }
        try log.reset()
        for index in 0..<3 { try log.record(entry(index)) }
        XCTAssertEqual(try log.firstEntries(100), (0..<3).map { logged(entry($0)) })
        XCTAssertEqual(log.total, 3)
    }

    /// Texts the entry before had are bound from the same bytes, and each statement's texts
    /// from one buffer: an empty text must stay empty, not NULL, and a missing one NULL, also
    /// where a run of them crosses from one statement (64 entries) to the next, and in the
    /// last statement of a batch, which holds fewer.
    func testEmptyAndMissingTextsReadBackAsRecordedAcrossStatements() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let texts: [String?] = ["", nil, "\u{0}cut at once", "x", ""]
        let fields: [String?] = ["", nil, "x", "", "y"]
        let entries = (0..<10_000 + 150).map { index in
            RepairEntry(
                rule: .conflict, kind: .merge, entity: index / 60 % 2 == 0 ? "" : "GameSession", primaryKey: Int64(index),
                cloudID: texts[index / 7 % texts.count], field: fields[index / 3 % fields.count],
                old: index % 5 == 0 ? nil : .value(.string(index % 2 == 0 ? "" : "v\(index)")), new: .value(.null))
        }
        for entry in entries { try log.record(entry) }
        let read = try log.firstEntries(entries.count)
        XCTAssertEqual(read.count, entries.count)
        for index in entries.indices where read[index] != logged(entries[index]) {
            XCTFail("entry \(index): \(read[index]), not \(logged(entries[index]))")
            break
        }
        XCTAssertEqual(read[1].cloudID, "")
        XCTAssertEqual(read[7].cloudID, nil)
        XCTAssertEqual(read[14].cloudID, "")
        XCTAssertEqual(read[2].old, "\"\"")
        XCTAssertEqual(read[0].old, nil)
    }

    /// `resolveCloudIDs` writes the log's file again: a lookup that throws after some entries
    /// were given their cloudID must leave the log as it was, and the log must go on taking
    /// entries after it.
    func testAResolveThatFailsLeavesTheEntriesAsTheyWere() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let count = 12_345
        for index in 0..<count { try log.record(entry(index)) }
        let before = try log.firstEntries(count)
        struct LookupFailed: Error {}
        var looked = 0
        XCTAssertThrowsError(
            try log.resolveCloudIDs(entity: "TaskEstimation") { key in
                looked += 1
                if looked > 100 { throw LookupFailed() }
                return "resolved \(key)"
            })
        XCTAssertEqual(looked, 101)
        XCTAssertEqual(try log.firstEntries(count), before)
        // No file of the rewrite is left beside the log's.
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), ["repairs.entries"])
        // And the log goes on: an entry after the failure is kept with the others.
        try log.record(entry(count))
        XCTAssertEqual(try log.firstEntries(count + 1), before + [logged(entry(count))])
    }

    /// What the SQLite log's `UPDATE … WHERE entity = ? AND pk = ? AND rule <> dedup` did: every
    /// entry of the entity but a `dedup`'s takes its record's cloudID where the lookup gives one
    /// (cut at a NUL, as the log gives every text back), whatever the order or the batch the
    /// entries are in; the others keep theirs. The lookup is asked once per run of one record's
    /// entries.
    func testResolvedCloudIDsAreTheLookupsForTheEntitysEntriesButDedups() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        // Records 0..<3,000 of two entities, three entries each, then record 7 of the first once
        // more (after the others: a second run of its entries), across two batches.
        var entries: [RepairEntry] = []
        for record in 0..<3_000 {
            for field in 0..<3 {
                entries.append(
                    RepairEntry(
                        rule: field == 2 && record % 10 == 0 ? .dedup : .conflict, kind: .merge,
                        entity: record % 2 == 0 ? "TaskEstimation" : "GameSession", primaryKey: Int64(record / 2),
                        cloudID: record % 3 == 0 ? nil : "before \(record)", field: "field\(field)", old: .value(.integer(Int64(field))),
                        new: .value(.double(0.1))))
            }
        }
        entries += entries.filter { $0.entity == "TaskEstimation" && $0.primaryKey == 7 }
        for _ in 0..<4 { entries += entries.prefix(3_000) }
        for entry in entries { try log.record(entry) }
        var looked: [Int64] = []
        try log.resolveCloudIDs(entity: "TaskEstimation") { key in
            looked.append(key)
            // No cloudID for the records whose key ends in 5; one with a NUL for those ending in 4.
            return key % 10 == 5 ? nil : key % 10 == 4 ? "after \(key)\u{0}cut" : "after \(key)"
        }
        let expected = entries.map { entry in
            var entry = entry
            if entry.entity == "TaskEstimation", entry.rule != .dedup, entry.primaryKey % 10 != 5 {
                entry.cloudID = "after \(entry.primaryKey)"
            }
            return logged(entry)
        }
        let read = try log.firstEntries(-1)
        XCTAssertEqual(read.count, expected.count)
        for index in expected.indices where read[index] != expected[index] {
            XCTFail("entry \(index): \(read[index]), not \(expected[index])")
            break
        }
        // One lookup per run of a record's entries: 1,500 records, record 7's second run, and the
        // runs of the entries copied again (a thousand records of each entity per copy).
        XCTAssertEqual(looked.count, 1_500 + 1 + 4 * 500)
        // An entity without entries leaves the log alone and asks nothing.
        try log.resolveCloudIDs(entity: "Routine") { _ in
            XCTFail("no entry of Routine to look up")
            return nil
        }
        XCTAssertEqual(try log.firstEntries(-1), read)
        // The log goes on after a rewrite: entries recorded after it come after the others.
        try log.record(entry(1))
        XCTAssertEqual(try log.firstEntries(-1), read + [logged(entry(1))])
    }

    /// The entries are kept as values, and their JSON made when read: each line and each
    /// entry's texts must be the codec's JSON of the values recorded, bit for bit for a number
    /// (a negative zero, a NaN, the infinities, a Double's shortest spelling), and every kind
    /// of value must come back as itself.
    func testEveryKindOfValueReadsBackAsTheCodecSpellsIt() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        let values: [Value] = [
            .null, .integer(.min), .integer(.max), .boolean(true), .boolean(false), .double(-0.0), .double(.nan), .double(.infinity),
            .double(-.infinity), .double(0.1), .double(1e-300), .double(.ulpOfOne), .string(""), .string("nul\u{0}and \"quote\"\u{1F}é"),
            .textBytes(Data([0xFF, 0x00, 0xC3])), .date(-63_114_076_800), .date(1e20), .date(-0.5), .integerDate(1 << 60),
            .uuid(UUID(uuidString: "2F537EDD-BFBC-4B98-A4F6-E7FF7A82F2C3")!), .binary(Data()),
            .binary(Data((0..<300).map { UInt8($0 % 256) })),
            .integerArray([]), .integerArray([1, -2, .max]), .stringArray(["a", "", "\u{0}"]), .decimal("12.5"), .decimal("-Infinity"),
        ]
        let reportValues: [ReportValue?] =
            values.map { .value($0) } + [nil, .record([:]), .record(["b": .double(2.5), "a": .string("x"), "c": .uuid(UUID())])]
        var recorded: [RepairEntry] = []
        for (index, old) in reportValues.enumerated() {
            recorded.append(
                RepairEntry(
                    rule: .conflict, kind: .merge, entity: "E", primaryKey: Int64(index), cloudID: nil, field: "f", old: old,
                    new: reportValues[reportValues.count - 1 - index]))
        }
        for entry in recorded { try log.record(entry) }
        XCTAssertEqual(try log.firstEntries(-1), recorded.map(logged))
        var lines: [String] = []
        try log.forEachEntryLine { lines.append($0) }
        XCTAssertEqual(
            lines,
            recorded.map { entry in
                var object = JSONObjectWriter()
                object.add("_pk", .integer(entry.primaryKey))
                object.add("entity", string: entry.entity)
                object.add("field", string: entry.field)
                object.add("kind", string: entry.kind.rawValue)
                object.add("new", json: entry.new?.json)
                object.add("old", json: entry.old?.json)
                object.add("rule", string: entry.rule.rawValue)
                return String(decoding: object.finished, as: UTF8.self)
            })
    }

    /// A file cut inside an entry, or holding bytes no writer of the log writes, is said to be
    /// damaged, never read as entries it does not hold.
    func testADamagedFileIsRefused() throws {
        let directory = try TemporaryTestDirectory()
        let log = try RepairLog(directory: directory.url)
        for index in 0..<100 { try log.record(entry(index)) }
        XCTAssertEqual(try log.firstEntries(-1).count, 100)
        let url = directory.url.appendingPathComponent("repairs.entries")
        let whole = try Data(contentsOf: url)
        for damaged in [whole.prefix(whole.count - 1), whole + Data([1]), whole.prefix(12) + Data([99]) + whole.dropFirst(13)] {
            try damaged.write(to: url)
            XCTAssertThrowsError(try log.firstEntries(-1)) { XCTAssertTrue($0 is RepairLogFileDamaged, "\($0)") }
        }
    }
}
