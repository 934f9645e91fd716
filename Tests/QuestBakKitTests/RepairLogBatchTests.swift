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

    /// The log's scratch file has a rollback journal kept open and truncated
    /// at each commit: a write that fails inside a transaction must still be undone (here
    /// `resolveCloudIDs`, whose lookup throws after some entries were updated), and the log
    /// must read back as it was.
    func testAWriteThatFailsIsRolledBackWithTheJournalKeptOpen() throws {
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
        // The journal is still there, empty (truncated, not deleted, at the rollback's end).
        let journal = directory.url.appendingPathComponent("repairs.sqlite-journal").path
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int, 0)
        // And the log goes on: an entry after the failure is kept with the others.
        try log.record(entry(count))
        XCTAssertEqual(try log.firstEntries(count + 1), before + [logged(entry(count))])
    }
}
