import CoreDataStore
import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakKit

/// How `diff` reads two inputs that differ: the content comparison names the tables that differ
/// (`Differ.StoreBytes.Verdict`), a store's read hashes only the members that may be the other
/// side's twin, reads again only the members it loads (`Exporter.Options.onlyMembers`), and
/// encodes each record line where it is read (`Differ.LineEncoder`). Each diff is checked against
/// the one without the shortcuts (`loadsTwinsThin` off): the same counts and listing.
final class DifferReadTests: XCTestCase {
    private func diff(_ a: URL, _ b: URL, shortcuts: Bool) throws -> (lines: [String], digested: (a: Set<String>, b: Set<String>)) {
        let work = try TemporaryTestDirectory()
        var options = Differ.Shortcuts()
        options.loadsTwinsThin = shortcuts
        return try Differ.diff(a, b, profiles: [.timeQuest], workDirectory: work.url, shortcuts: options) { listing in
            (try DiffTestSides.lines(of: listing), listing.digested)
        }
    }

    /// The listing with the shortcuts, after asserting it is the one without them; and which
    /// members each side hashed.
    private func checked(
        _ a: URL, _ b: URL, _ label: String, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (
        lines: [String], digested: (a: Set<String>, b: Set<String>)
    ) {
        let fast = try diff(a, b, shortcuts: true)
        XCTAssertEqual(fast.lines, try diff(a, b, shortcuts: false).lines, label, file: file, line: line)
        return fast
    }

    private func edit(_ store: URL, _ sql: String) throws {
        try DatabaseQueue(path: store.path).writeWithoutTransaction { try $0.execute(sql: sql) }
    }

    /// Past a difference, the comparison still reads the last range of rowids of each other
    /// table, and names each table found to differ; the schema differing, it names none
    /// (anything may differ).
    func testTheContentComparisonNamesTheTablesThatDiffer() throws {
        let directory = try TemporaryTestDirectory()
        let original = directory.path("original.sqlite")
        try edit(
            original,
            """
            CREATE TABLE ZITEM (Z_PK INTEGER PRIMARY KEY, ZNAME VARCHAR);
            CREATE INDEX ZITEM_ZNAME_INDEX ON ZITEM (ZNAME);
            INSERT INTO ZITEM VALUES (1, 'one'), (2, 'two'), (3, 'three');
            CREATE TABLE big (v INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) INSERT INTO big SELECT i FROM n;
            CREATE TABLE plain (a);
            INSERT INTO plain VALUES (1);
            """)
        func verdict(_ changes: String...) throws -> Differ.StoreBytes.Verdict {
            let copy = directory.path("copy.sqlite")
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: original, to: copy)
            for change in changes { try edit(copy, change) }
            return try Differ.StoreBytes.compareContent(
                try StoreSnapshot(storeAt: original), try StoreSnapshot(storeAt: copy), rowidsPerPart: 4096)
        }
        XCTAssertEqual(try verdict(), Differ.StoreBytes.Verdict(isSame: true, tablesDiffering: nil))
        XCTAssertEqual(try verdict("UPDATE big SET v = 0 WHERE rowid = 19999").tablesDiffering, ["big"])
        XCTAssertEqual(try verdict("UPDATE big SET v = 0 WHERE rowid = 3").tablesDiffering, ["big"])
        // Past the first difference, the last range of every other table is read.
        XCTAssertEqual(
            try verdict("UPDATE big SET v = 0 WHERE rowid = 19999", "UPDATE plain SET a = 2").tablesDiffering, ["big", "plain"])
        XCTAssertEqual(try verdict("UPDATE ZITEM SET ZNAME = 'One' WHERE Z_PK = 1").tablesDiffering, ["ZITEM"])
        for change in ["CREATE TABLE more (a)", "VACUUM", "PRAGMA user_version = 3"] {
            XCTAssertEqual(try verdict(change), Differ.StoreBytes.Verdict(isSame: false, tablesDiffering: nil), change)
        }
    }

    /// A store diffed against another store or an archive of other content hashes only the
    /// members that may be the other's (`Side.digests`): not one whose table the comparison
    /// found to differ, nor one whose first record line is not the archive's.
    func testAStoreSideHashesOnlyTheMembersThatMayBeTwins() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("v2-typical")
        let entities: Set<String> = ["GameSession", "PlayerProfile", "Routine", "RoutineTask", "TaskEstimation"]
        let last = try directory.copyFixture("v2-typical", as: "last")
        try edit(
            last,
            "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)")
        let stores = try checked(a, last, "last estimation changed")
        XCTAssertTrue(stores.lines.contains { $0.hasPrefix("TaskEstimation by cloudID: 0 0 1") }, "\(stores.lines)")
        XCTAssertEqual(stores.digested.a, entities.subtracting(["TaskEstimation"]))
        XCTAssertEqual(stores.digested.b, entities.subtracting(["TaskEstimation"]))
        // Against its archive: the first line is A's, so A's member is hashed (and loaded thin).
        let lastArchive = directory.path("last.qbak")
        try DiffTestSides.export(last, to: lastArchive)
        XCTAssertEqual(try checked(a, lastArchive, "archive, last changed").digested.a, entities)
        // The first estimation changed: its archive's first line is not A's.
        let first = try directory.copyFixture("v2-typical", as: "first")
        try edit(
            first,
            "UPDATE ZTASKESTIMATION SET ZESTIMATEDSECONDS = ZESTIMATEDSECONDS + 1 WHERE Z_PK = (SELECT min(Z_PK) FROM ZTASKESTIMATION)")
        let firstArchive = directory.path("first.qbak")
        try DiffTestSides.export(first, to: firstArchive)
        XCTAssertEqual(try checked(a, firstArchive, "archive, first changed").digested.a, entities.subtracting(["TaskEstimation"]))
        // Two stores of the same content: B is not read, and nothing is hashed.
        XCTAssertEqual(try checked(a, a, "itself").digested.a, [])
    }

    /// The tables' verdict is a hint: a table that differs only in rows a member does not hold
    /// (another sub-entity's) leaves that member unhashed and loaded whole on both sides, and a
    /// member whose own table is the same but whose join table differs is hashed, found not to
    /// be A's, and read again; the listing is the one without the hint either way.
    func testTheTablesVerdictIsOnlyAHint() throws {
        let directory = try TemporaryTestDirectory()
        let a = try directory.copyFixture("AnyApp/kitchen-sink")
        // Without its external-storage folder: a store with one is never compared by content.
        try FileManager.default.removeItem(at: ExternalStorage.supportFolder(forStore: a))
        // An Ingredient of its own, beside the Liquids and Solids of its table.
        try edit(
            a,
            "INSERT INTO ZINGREDIENT (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (7, 2, 1, 'Ice'); UPDATE Z_PRIMARYKEY SET Z_MAX = 7 WHERE Z_ENT = 2"
        )
        // A copy of A's folder, edited.
        func copy(_ name: String, edited sql: String) throws -> URL {
            let store = directory.path("\(name)/default.store")
            try FileManager.default.copyItem(at: a.deletingLastPathComponent(), to: store.deletingLastPathComponent())
            try edit(store, sql)
            return store
        }
        let liquid = try copy("liquid", edited: "UPDATE ZINGREDIENT SET ZNAME = 'Old Tom Gin' WHERE Z_PK = 6")
        let sub = try checked(a, liquid, "a Liquid changed")
        XCTAssertEqual(sub.lines.first, "1 added, 1 removed, 0 changed")
        XCTAssertFalse(sub.digested.a.contains("Ingredient"), "\(sub.digested.a)")
        XCTAssertTrue(sub.digested.a.contains("Recipe"), "\(sub.digested.a)")
        let tags = try copy("tags", edited: "DELETE FROM Z_5TAGS WHERE rowid = (SELECT max(rowid) FROM Z_5TAGS)")
        let joined = try checked(a, tags, "a tag taken off a recipe")
        XCTAssertEqual(joined.lines.first, "0 added, 0 removed, 1 changed")
        XCTAssertTrue(joined.digested.a.contains("Recipe"), "\(joined.digested.a)")
        XCTAssertTrue(joined.digested.b.contains("Recipe"), "\(joined.digested.b)")
    }

    /// A pass over a store asked for some members (`Exporter.Options.onlyMembers`, a side's
    /// members read again) hands over those members' lines, as the whole pass does, and no other.
    func testAPassForSomeMembersHandsOverTheirLinesAlone() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        func lines(only: Set<String>?) throws -> [String: [UInt8]] {
            var options = Exporter.Options(createdAt: 0, compression: .none)
            options.profiles = [.timeQuest]
            options.onlyMembers = only
            var lines: [String: [UInt8]] = [:]
            _ = try Exporter.records(of: try StoreSnapshot(storeAt: store), options: options) { name, bytes in
                lines[name, default: []] += bytes
            }
            return lines
        }
        let all = try lines(only: nil)
        XCTAssertEqual(Set(all.keys), ["GameSession", "PlayerProfile", "Routine", "RoutineTask", "TaskEstimation"])
        let some = try lines(only: ["GameSession", "TaskEstimation"])
        XCTAssertEqual(Set(some.keys), ["GameSession", "TaskEstimation"])
        XCTAssertEqual(some["GameSession"], all["GameSession"])
        XCTAssertEqual(some["TaskEstimation"], all["TaskEstimation"])
    }

    /// `LineEncoder` gives for each line what encoding it parsed whole gives: the same keys,
    /// values and cloudID hashes, for lines read by position (ASCII text, escapes, text past
    /// ASCII, numbers, composites, `_pk` of every kind, cloudIDs well formed or not) and for
    /// lines whose keys are not the first line's; a line that is no JSON object is refused
    /// alike. `thinRecord` hashes the same cloudIDs.
    func testTheLineEncoderGivesWhatParsingWholeGives() throws {
        let id = "B701BAA0-973B-4C68-AA0A-55B288D1AE08"
        let lines = [
            #"{"_pk":1,"_opt":2,"cloudID":"\#(id)","name":"plain","n":1.5,"i":3,"b":true,"z":null,"a":[1,"x"],"o":{"k":"v"},"ZCLOUDID":"no"}"#,
            #"{"_pk":2,"_opt":1,"cloudID":"\#(id.lowercased())","name":"Zürich","n":-0.0,"i":-9223372036854775808,"b":false,"z":"","a":[],"o":{},"ZCLOUDID":"\#(id)"}"#,
            #"{"_pk":"3","_opt":"x","cloudID":"\#(id)\u0000","name":"a\"b\\c\u00e9","n":1e300,"i":0,"b":null,"z":[null],"a":[{"k":1}],"o":{"k":[1,2]},"ZCLOUDID":7}"#,
            #"{"_pk":4.0,"_opt":null,"cloudID":null,"name":"tab\there","n":2,"i":1.0,"b":"true","z":{"a":"b"},"a":"[1]","o":"{}","ZCLOUDID":null}"#,
            #" { "_pk" : 5 , "_opt" : 1 , "cloudID" : "\#(id)" , "name" : "spaced" , "n" : 0 , "i" : 1 , "b" : true , "z" : null , "a" : [ ] , "o" : { } , "ZCLOUDID" : "x" } "#,
            // Other keys, or the same in another order: parsed whole.
            #"{"cloudID":"\#(id)","_pk":6}"#,
            #"{"_pk":7,"_opt":1,"cloudID":"\#(id)","name":"more","n":1,"i":1,"b":true,"z":null,"a":[],"o":{},"ZCLOUDID":"x","extra":1}"#,
            #"{"_pk":8,"_opt":1,"cloudID":"\#(id)","name":"fewer"}"#,
            #"{"_pk":9,"_opt":1,"cloudID":"\#(id)","name":"last","n":1,"i":1,"b":true,"z":null,"a":[],"o":{},"ZCLOUDID":"\#(id)"}"#,
        ]
        func same(_ left: Differ.EncodedRecord, _ right: Differ.EncodedRecord, _ label: String) {
            XCTAssertEqual(left.keys, right.keys, label)
            XCTAssertEqual(left.values, right.values, label)
            XCTAssertEqual(left.cloudIDs.map(\.index), right.cloudIDs.map(\.index), label)
            XCTAssertEqual(left.cloudIDs.map(\.hash), right.cloudIDs.map(\.hash), label)
        }
        var encoder = Differ.LineEncoder()
        let text = Differ.ValueText()
        for line in lines {
            let bytes = Array(line.utf8)
            let encoded = try bytes.withUnsafeBufferPointer { try encoder.encode("Entity", $0) }
            let whole = Differ.LineEncoder.encode(try JSONLine.parseObject(Data(bytes)), text: text)
            same(encoded, whole, line)
            XCTAssertEqual(whole.keys.count, whole.values.count, line)
        }
        XCTAssertEqual(
            try Array(lines[0].utf8).withUnsafeBufferPointer { try encoder.encode("Entity", $0) }.cloudIDs.map(\.hash),
            [StableHasher.fnv1a(id.utf8)])
        // A line of another entity begins its keys afresh; text that is no object is refused.
        let other = try Array(lines[5].utf8).withUnsafeBufferPointer { try encoder.encode("Other", $0) }
        XCTAssertEqual(other.keys, ["cloudID", "_pk"])
        XCTAssertThrowsError(try Array(#"{"_pk":1,"#.utf8).withUnsafeBufferPointer { try encoder.encode("Other", $0) })
        XCTAssertThrowsError(try Array(#"{"_pk":1,"_pk":2}"#.utf8).withUnsafeBufferPointer { try encoder.encode("Third", $0) })
        // A thin line's hashes are the encoder's.
        let keys = try XCTUnwrap(JSONLine.KeysInOrder(try JSONLine.parseObject(Data(lines[0].utf8)).map(\.key)))
        for line in lines.prefix(5) {
            let bytes = Array(line.utf8)
            let record = bytes.withUnsafeBufferPointer { Differ.thinRecord("Entity", $0, keys: keys, flaggedPlaces: [2, 10]) }
            guard case .thin(_, _, let cloudIDs) = try XCTUnwrap(record, line) else { return XCTFail(line) }
            let whole = Differ.LineEncoder.encode(try JSONLine.parseObject(Data(bytes)), text: text)
            XCTAssertEqual(cloudIDs.map(\.index), whole.cloudIDs.map(\.index), line)
            XCTAssertEqual(cloudIDs.map(\.hash), whole.cloudIDs.map(\.hash), line)
        }
    }
}
