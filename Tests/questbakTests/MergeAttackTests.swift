import Foundation
import QuestBakTestSupport
import XCTest

/// `import --merge` attacked: values and layouts where matching by identity can go wrong. A
/// store's own archive must merge into it as nothing; merging twice must equal merging once; no
/// record of either side may be lost or doubled.
final class MergeAttackTests: XCTestCase, MergeTesting {
    /// The kitchen-sink store edited by `statements`, merged with its own archive: nothing changes.
    func assertOwnArchiveMergesAsNothing(_ statements: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "store")
        _ = try sql(store, statements)
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        let before = files(store)
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, true, "\(document)", file: file, line: line)
        XCTAssertEqual(files(store), before, "a store's own archive must leave it byte for byte", file: file, line: line)
    }

    /// A NULL in a uniqueness constraint's column identifies nothing (SQLite's unique index lets
    /// any number of rows hold NULL): such a record must still be found in its own store, not
    /// inserted again, with its children, at every merge.
    func testARecordWithANullUniqueValueIsNotInsertedAgain() throws {
        try assertOwnArchiveMergesAsNothing("UPDATE ZRECIPE SET ZCODE = NULL WHERE Z_PK = 4")
    }

    /// A to-one that names a missing record (an archive of another app restores as archived)
    /// cannot be translated; the record is still the store's own.
    func testARecordWithADanglingToOneIsNotInsertedAgain() throws {
        try assertOwnArchiveMergesAsNothing("UPDATE ZINGREDIENT SET ZRECIPE = 99 WHERE Z_PK = 1")
    }

    /// Records matched by content are matched one to one: two equal steps of the archive are two
    /// records, and a store with one of them gets the other.
    func testEqualRecordsMatchedByContentAreMatchedOneToOne() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("AnyApp/kitchen-sink", as: "source")
        _ = try sql(
            source,
            "INSERT INTO ZSTEP SELECT 6, Z_ENT, Z_OPT, ZSECONDS, Z5STEPS, ZTEXT FROM ZSTEP WHERE Z_PK = 1; UPDATE Z_PRIMARYKEY SET Z_MAX = 6 WHERE Z_NAME = 'Step'"
        )
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "store")
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, false, "\(document)")
        XCTAssertEqual(try sql(store, "SELECT count(*) FROM ZSTEP WHERE ZTEXT LIKE 'Stir with ice%'"), "2")
        XCTAssertEqual(try merge(archive, into: store)["unchanged"] as? Bool, true)
        // The store's own archive, with its two equal steps, is still nothing to merge.
        let own = directory.path("own.qbak")
        try export(store, to: own)
        XCTAssertEqual(try merge(own, into: store)["unchanged"] as? Bool, true)
    }

    /// A store record whose cloudID is a default (shared by others, or not a UUID) has no
    /// CloudKit identity: the archive's copy's own cloudID is its identity and fills it, rather
    /// than being reported as superseded (which tells the app to delete the real CloudKit record).
    func testADefaultCloudIDInTheStoreIsFilledNotKeptOverTheArchivesRealOne() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical", as: "store")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        let real =
            try sql(store, "SELECT ZCLOUDID FROM ZROUTINE ORDER BY Z_PK") + "\n"
            + sql(store, "SELECT ZCLOUDID FROM ZGAMESESSION WHERE Z_PK = 1")
        _ = try sql(
            store,
            "UPDATE ZROUTINE SET ZCLOUDID = '00000000-0000-0000-0000-000000000000'; UPDATE ZGAMESESSION SET ZCLOUDID = '' WHERE Z_PK = 1")
        let document = try merge(archive, into: store)
        let superseded = ((document["entries"] as? [[String: Any]]) ?? []).filter { $0["rule"] as? String == "supersede" }
        XCTAssertEqual(superseded.count, 0, "\(superseded)")
        XCTAssertEqual(
            try sql(store, "SELECT ZCLOUDID FROM ZROUTINE ORDER BY Z_PK") + "\n"
                + sql(store, "SELECT ZCLOUDID FROM ZGAMESESSION WHERE Z_PK = 1"), real)
        XCTAssertEqual(try merge(archive, into: store)["unchanged"] as? Bool, true)
    }

    /// An archive record's cloudID that two store records hold identifies neither of them: that
    /// routine is found by its natural key, and a routine whose cloudID the store holds once by
    /// its cloudID.
    func testACloudIDTheStoreHoldsTwiceIdentifiesNoRecord() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical", as: "store")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        XCTAssertEqual(try sql(store, "SELECT count(*) FROM ZROUTINE"), "3")
        _ = try sql(store, "UPDATE ZROUTINE SET ZCLOUDID = (SELECT ZCLOUDID FROM ZROUTINE WHERE Z_PK = 1) WHERE Z_PK = 2")
        let document = try merge(archive, into: store)
        let routine = try XCTUnwrap((document["entities"] as? [[String: Any]])?.first { $0["name"] as? String == "Routine" })
        XCTAssertEqual(routine["matched"] as? [String: Int], ["cloudID": 1, "natural key": 2], "\(routine)")
        XCTAssertEqual(routine["inserted"] as? Int, 0, "\(routine)")
    }

    /// Records in both are settled in the store's key order, whatever order the archive's keys
    /// give: here the archive holds the store's first two routines under each other's keys, so
    /// its keys run against the store's, and the report lists the store's routine 1 first.
    func testRecordsInBothAreSettledInTheStoresKeyOrder() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical", as: "source")
        _ = try sql(
            source,
            """
            UPDATE ZROUTINE SET Z_PK = -1 WHERE Z_PK = 1; UPDATE ZROUTINE SET Z_PK = 1 WHERE Z_PK = 2; UPDATE ZROUTINE SET Z_PK = 2 WHERE Z_PK = -1;
            UPDATE ZROUTINETASK SET ZROUTINE = 3 - ZROUTINE WHERE ZROUTINE IN (1, 2);
            UPDATE ZGAMESESSION SET ZROUTINE = 3 - ZROUTINE WHERE ZROUTINE IN (1, 2);
            UPDATE ZROUTINE SET ZDISPLAYNAME = ZDISPLAYNAME || ' (tablet)' WHERE Z_PK IN (1, 2)
            """)
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("v2-typical", as: "store")
        let document = try merge(archive, into: store)
        let conflicts = ((document["entries"] as? [[String: Any]]) ?? []).filter {
            $0["entity"] as? String == "Routine" && $0["rule"] as? String == "conflict"
        }
        XCTAssertEqual(conflicts.compactMap { $0["_pk"] as? Int }, [1, 2], "\(conflicts)")
        XCTAssertEqual(conflicts.compactMap { $0["old"] as? String }, ["Morning Routine (tablet)", "School Prep (tablet)"])
    }

    /// A one-to-one (AppSettings <-> ParentSettings, a foreign key on both sides): when one side
    /// is matched, its partner is the store's partner, merged field by field. Inserting the
    /// archive's partner as a new record would leave two ParentSettings naming one AppSettings
    /// that names only one of them, and duplicate every record that names the partner.
    func testTheArchivesOneToOnePartnerOfAMatchedRecordIsTheStoresPartner() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("AnyApp/bennie-game", as: "source")
        _ = try sql(source, "UPDATE ZPARENTSETTINGS SET ZDAILYTIMELIMITMINUTES = 30")
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("AnyApp/bennie-game", as: "store")
        let counts =
            "SELECT (SELECT count(*) FROM ZAPPSETTINGS), (SELECT count(*) FROM ZPARENTSETTINGS), (SELECT count(*) FROM ZAPPROVEDVIDEO)"
        let before = try sql(store, counts)
        _ = try merge(archive, into: store, ["--prefer", "archive"])
        XCTAssertEqual(try sql(store, counts), before)
        XCTAssertEqual(
            try sql(
                store,
                "SELECT a.ZPARENTSETTINGS = p.Z_PK, p.ZAPPSETTINGS = a.Z_PK, p.ZDAILYTIMELIMITMINUTES FROM ZAPPSETTINGS a, ZPARENTSETTINGS p"
            ),
            "1|1|30")
        XCTAssertEqual(try merge(archive, into: store)["unchanged"] as? Bool, true)
    }

    /// Two archive records one store record matches (one by cloudID, the other by natural key)
    /// are settled one after the other: the second sees what the first filled, so a field is
    /// filled once and the other value is a conflict the store's (now filled) value wins.
    func testTwoArchiveRecordsOfOneStoreRecordAreSettledAgainstTheRecordAsMerged() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical", as: "source")
        _ = try sql(
            source,
            """
            UPDATE ZROUTINE SET ZDISPLAYNAME = 'One' WHERE Z_PK = 1;
            INSERT INTO ZROUTINE (Z_PK, Z_ENT, Z_OPT, ZISACTIVE, ZCREATEDAT, ZUPDATEDAT, ZNAME, ZDISPLAYNAME, ZACTIVEDAYS, ZCLOUDID)
              SELECT 9, Z_ENT, 1, 1, ZCREATEDAT, ZUPDATEDAT, 'renamed', 'Two', ZACTIVEDAYS, '99999999-9999-4999-8999-999999999999'
              FROM ZROUTINE WHERE Z_PK = 1;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 9 WHERE Z_NAME = 'Routine';
            """)
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("v2-typical", as: "store")
        _ = try sql(store, "UPDATE ZROUTINE SET ZNAME = 'renamed', ZDISPLAYNAME = NULL WHERE Z_PK = 1")
        let document = try merge(archive, into: store)
        XCTAssertEqual(try sql(store, "SELECT ZDISPLAYNAME FROM ZROUTINE WHERE Z_PK = 1"), "One")
        let entries = ((document["entries"] as? [[String: Any]]) ?? []).filter { $0["field"] as? String == "displayName" }
        XCTAssertEqual(entries.map { $0["rule"] as? String }, ["fill", "conflict"], "\(entries)")
        let routine = ((document["entities"] as? [[String: Any]]) ?? []).first { $0["name"] as? String == "Routine" }
        XCTAssertEqual(routine?["changed"] as? Int, 1)
    }

    /// A V1 archive has no cloudIDs: its restore as V2 makes them. They never reached CloudKit,
    /// so a record matched by natural key reports none of them as superseded (which tells the
    /// app to delete them from CloudKit).
    func testCloudIDsAV1ArchivesRestoreMadeAreNotReportedAsSuperseded() throws {
        let directory = try TemporaryTestDirectory()
        let v1 = try directory.copyFixture("v1-typical", as: "v1")
        let archive = directory.path("v1.qbak")
        try export(v1, to: archive)
        let store = directory.path("v2/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.run(["migrate", v1.path, "-o", store.path, "-q"]).status, 0)
        _ = try sql(store, "UPDATE ZGAMESESSION SET ZCLOUDID = '11111111-1111-4111-8111-111111111111' WHERE Z_PK = 1")
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, true, "\(document)")
        let superseded = ((document["entries"] as? [[String: Any]]) ?? []).filter { $0["rule"] as? String == "supersede" }
        XCTAssertEqual(superseded.count, 0, "\(superseded)")
    }

    /// A report that cannot be written refuses the merge before the store is replaced: else the
    /// store is merged, the command fails, and neither the backup's name nor the undo is told.
    func testAReportPathThatCannotBeWrittenLeavesTheStoreAlone() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("AnyApp/kitchen-sink", as: "source")
        _ = try sql(source, "INSERT INTO ZTAG VALUES (9, 7, 1, 5, 'extra'); UPDATE Z_PRIMARYKEY SET Z_MAX = 9 WHERE Z_NAME = 'Tag'")
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "store")
        let before = files(store)
        let result = try Questbak.run([
            "import", archive.path, "--merge", "--into", store.path, "--report", directory.path("missing/report.json").path,
        ])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertEqual(files(store), before)
        let merged = try Questbak.run([
            "import", archive.path, "--merge", "--into", store.path, "--report", directory.path("report.json").path,
        ])
        XCTAssertEqual(merged.status, 0, merged.standardError)
        XCTAssertNotNil(FileManager.default.contents(atPath: directory.path("report.json").path))
    }

    /// A store record whose to-one names no record lacks that relationship: the archive's copy,
    /// whose to-one names a record, fills it (as it fills a NULL), whatever the preference.
    func testAStoresDanglingToOneIsFilledByTheArchivesValidOne() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical", as: "store")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        _ = try sql(store, "UPDATE ZGAMESESSION SET ZROUTINE = 99 WHERE Z_PK = 1")
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, false)
        XCTAssertEqual(try sql(store, "SELECT ZROUTINE FROM ZGAMESESSION WHERE Z_PK = 1"), "1")
        let fills = ((document["entries"] as? [[String: Any]]) ?? []).filter { $0["rule"] as? String == "fill" }
        XCTAssertEqual(fills.map { $0["field"] as? String }, ["routine"])
        XCTAssertEqual(try merge(archive, into: store)["unchanged"] as? Bool, true)
    }

    /// --prefer newer with the store's date NULL and the archive's set: the archive's copy is
    /// the newer. Keeping the store's values while filling the archive's date would make the
    /// store's older values pass for the newer ones at every later merge.
    func testPreferNewerTakesADatedArchiveCopyOverAnUndatedStoreRecord() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical", as: "source")
        _ = try sql(source, "UPDATE ZROUTINE SET ZDISPLAYNAME = 'Edited later', ZUPDATEDAT = 790000000 WHERE Z_PK = 1")
        let archive = directory.path("source.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("v2-typical", as: "store")
        _ = try sql(store, "UPDATE ZROUTINE SET ZUPDATEDAT = NULL WHERE Z_PK = 1")
        _ = try merge(archive, into: store, ["--prefer", "newer"])
        XCTAssertEqual(try sql(store, "SELECT ZDISPLAYNAME, ZUPDATEDAT FROM ZROUTINE WHERE Z_PK = 1"), "Edited later|790000000")
        XCTAssertEqual(try merge(archive, into: store, ["--prefer", "newer"])["unchanged"] as? Bool, true)
    }

    /// --keep-distinct-ids keeps records of one natural key apart when their cloudIDs differ;
    /// a default cloudID (shared by the store's records) is no cloudID of a record, so the
    /// archive's copies are still the store's records, not inserted again beside them.
    func testKeepDistinctIDsDoesNotTakeAStoresDefaultCloudIDForAnIdentity() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical", as: "store")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        _ = try sql(store, "UPDATE ZROUTINE SET ZCLOUDID = '00000000-0000-0000-0000-000000000000'")
        _ = try merge(archive, into: store, ["--keep-distinct-ids"])
        XCTAssertEqual(try sql(store, "SELECT count(*) FROM ZROUTINE"), "3")
        XCTAssertEqual(try merge(archive, into: store, ["--keep-distinct-ids"])["unchanged"] as? Bool, true)
    }
}

/// Another app's store at scale: thousands of records linked through a to-many without an
/// inverse (a hidden column on the destination). Their restore used to look every link up by a
/// scan of all the others (quadratic: a 1M-row store took hours); it must restore and merge
/// with every link in place.
final class ModelStoreAtScaleTests: XCTestCase {
    func testThousandsOfHiddenColumnLinksRestoreAndMerge() throws {
        let directory = try TemporaryTestDirectory()
        let store = directory.path("big/default.store")
        let generator = try Questbak.runTool([
            "python3", Repository.root.appendingPathComponent("Benchmarks/model-store.py").path, "40000", store.path,
        ])
        XCTAssertEqual(generator.status, 0, generator.standardError)
        let archive = directory.path("big.qbak")
        XCTAssertEqual(try Questbak.run(["export", store.path, "-o", archive.path, "-q"]).status, 0)
        let restored = directory.path("restored/default.store")
        let result = try Questbak.run(["import", archive.path, "--validate", "--into", restored.path, "-q"])
        XCTAssertEqual(result.status, 0, result.standardError)
        let links = "SELECT count(*), sum(Z5STEPS) FROM ZSTEP WHERE Z5STEPS IS NOT NULL"
        let expected = try Questbak.runTool(["sqlite3", store.path, links]).standardOutput
        XCTAssertTrue(expected.hasPrefix("2000"), expected)
        XCTAssertEqual(try Questbak.runTool(["sqlite3", restored.path, links]).standardOutput, expected)
        let merge = try Questbak.run(["import", archive.path, "--merge", "--into", restored.path, "--json"])
        XCTAssertEqual(merge.status, 0, merge.standardError)
        XCTAssertTrue(merge.standardOutput.contains("\"unchanged\":true"), String(merge.standardOutput.prefix(500)))
    }
}
