import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

/// `questbak import ARCHIVE --merge --into STORE`: records matched by identity, never by `Z_PK`;
/// nothing of the store deleted; every insert, fill, conflict and superseded cloudID reported.
final class MergeCommandTests: XCTestCase, MergeTesting {
    // MARK: Nothing to merge

    func testMergingAStoresOwnArchiveLeavesEveryFileByteForByte() throws {
        for fixture in ["v2-typical", "v1-typical", "v1-wal", "AnyApp/kitchen-sink", "AnyApp/bennie-game"] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let archive = directory.path("own.qbak")
            try export(store, to: archive)
            let before = files(store)
            let document = try merge(archive, into: store)
            XCTAssertEqual(document["unchanged"] as? Bool, true, fixture)
            XCTAssertNil(document["backup"] as? String, fixture)
            XCTAssertEqual(files(store), before, "\(fixture): a merge that adds nothing must not touch the store")
            let matched = ((document["entities"] as? [[String: Any]]) ?? []).map { entity in
                ((entity["matched"] as? [String: Int]) ?? [:]).values.reduce(0, +)
            }
            let read = ((document["entities"] as? [[String: Any]]) ?? []).map { $0["archive"] as? Int ?? -1 }
            XCTAssertEqual(matched, read, "\(fixture): every archive record is found in its own store")
            XCTAssertGreaterThan(read.reduce(0, +), 0, fixture)
        }
    }

    /// The merged store takes the store's place with the store's permissions, as its backup
    /// does: the merge builds it from a copy of the store (a regression: the private copy was
    /// once made 0600, and the merged store with it).
    func testAMergedStoreAndItsBackupKeepTheStoresPermissions() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("v2-typical")
        let archive = directory.path("backup.qbak")
        try export(store, to: archive)
        try DatabaseQueue(path: store.path).write { db in
            try db.execute(sql: "DELETE FROM ZTASKESTIMATION WHERE Z_PK = (SELECT max(Z_PK) FROM ZTASKESTIMATION)")
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o664], ofItemAtPath: store.path)
        let document = try merge(archive, into: store)
        let backup = try XCTUnwrap(document["backup"] as? String, "the merge adds the estimation back")
        let mode = { (path: String) in (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue }
        XCTAssertEqual(try mode(store.path), 0o664)
        XCTAssertEqual(try mode(backup), 0o664)
    }

    // MARK: The issue's scenarios

    /// A reinstalled device: it lost two sessions the older backup has, played new ones since,
    /// and got a copy of one estimation under a fresh cloudID. The merge keeps every session of
    /// both, the profile by its rules, and the store's cloudID for the copied estimation.
    func testReinstalledDeviceKeepsEverySessionOfBothAndMergesTheProfileByItsRules() throws {
        let directory = try TemporaryTestDirectory()
        let backupStore = try directory.copyFixture("v2-typical", as: "backup")
        let archive = directory.path("older.qbak")
        try export(backupStore, to: archive)
        let device = try directory.copyFixture("v2-typical", as: "device")
        _ = try sql(
            device,
            """
            DELETE FROM ZTASKESTIMATION WHERE ZSESSION = 2; DELETE FROM ZGAMESESSION WHERE Z_PK = 2;
            INSERT INTO ZGAMESESSION (Z_PK, Z_ENT, Z_OPT, ZROUTINE, ZSTARTEDAT, ZCOMPLETEDAT, ZISCALIBRATION, ZXPEARNED, ZCLOUDID)
              VALUES (7, 1, 1, 1, 763000000, 763000600, 0, 30, '11111111-1111-4111-8111-111111111111'),
                     (8, 1, 1, 2, 763100000, NULL, 0, 0, '22222222-2222-4222-8222-222222222222');
            INSERT INTO ZTASKESTIMATION (Z_PK, Z_ENT, Z_OPT, ZSESSION, ZTASKDISPLAYNAME, ZRECORDEDAT, ZESTIMATEDSECONDS, ZACTUALSECONDS,
                                         ZDIFFERENCESECONDS, ZACCURACYPERCENT, ZRATINGRAWVALUE, ZORDERINDEX, ZCLOUDID)
              VALUES (25, 5, 1, 7, 'Wake Up', 763000100, 60, 70, 10, 85, 'close', 0, '33333333-3333-4333-8333-333333333333');
            UPDATE ZTASKESTIMATION SET ZCLOUDID = '44444444-4444-4444-8444-444444444444' WHERE Z_PK = 1;
            UPDATE ZPLAYERPROFILE SET ZTOTALXP = 100, ZCURRENTSTREAK = 5, ZLASTPLAYEDDATE = 763100000, ZCREATEDAT = 762600000;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 8 WHERE Z_NAME = 'GameSession'; UPDATE Z_PRIMARYKEY SET Z_MAX = 25 WHERE Z_NAME = 'TaskEstimation';
            """)
        let sessionsOfBoth = Set(
            (try sql(device, "SELECT ZCLOUDID FROM ZGAMESESSION") + "\n" + sql(backupStore, "SELECT ZCLOUDID FROM ZGAMESESSION"))
                .split(separator: "\n"))
        let deviceBefore = try sql(device, "SELECT * FROM ZGAMESESSION ORDER BY Z_PK")

        let document = try merge(archive, into: device)
        XCTAssertEqual(document["unchanged"] as? Bool, false)
        XCTAssertNotNil(document["backup"] as? String)
        XCTAssertEqual(try sql(device, "PRAGMA integrity_check"), "ok")
        // Every session of both, once each; the device's own rows unchanged, under their keys.
        XCTAssertEqual(Set(try sql(device, "SELECT ZCLOUDID FROM ZGAMESESSION").split(separator: "\n")), sessionsOfBoth)
        XCTAssertEqual(try sql(device, "SELECT count(*) FROM ZGAMESESSION"), String(sessionsOfBoth.count))
        XCTAssertTrue(try sql(device, "SELECT * FROM ZGAMESESSION ORDER BY Z_PK").hasPrefix(deviceBefore))
        // The lost session came back under a new key above every used one, with its estimations.
        let returned = try sql(device, "SELECT Z_PK, ZROUTINE FROM ZGAMESESSION WHERE ZCLOUDID = 'EC2EB1A7-F083-442D-A597-B275269FD981'")
        XCTAssertEqual(returned, "9|1")
        XCTAssertEqual(try sql(device, "SELECT count(*) FROM ZTASKESTIMATION WHERE ZSESSION = 9"), "4")
        XCTAssertEqual(try sql(device, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'GameSession'"), "9")
        XCTAssertEqual(
            try sql(device, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'TaskEstimation'"),
            try sql(device, "SELECT max(Z_PK) FROM ZTASKESTIMATION"))
        // The estimation copied under a fresh cloudID is one record, with the store's cloudID.
        XCTAssertEqual(try sql(device, "SELECT count(*) FROM ZTASKESTIMATION WHERE ZSESSION = 1 AND ZTASKDISPLAYNAME = 'Wake Up'"), "1")
        let superseded = entries(document, rule: "supersede")
        XCTAssertEqual(superseded.count, 1)
        XCTAssertEqual(superseded.first?["old"] as? String, "B701BAA0-973B-4C68-AA0A-55B288D1AE08")
        XCTAssertEqual(superseded.first?["new"] as? String, "44444444-4444-4444-8444-444444444444")
        // The profile: the larger XP, streak and last play, the earlier creation.
        XCTAssertEqual(
            try sql(device, "SELECT ZTOTALXP, ZCURRENTSTREAK, ZLASTPLAYEDDATE, ZCREATEDAT FROM ZPLAYERPROFILE"), "240|5|763100000|762505140"
        )
        XCTAssertEqual(try sql(device, "SELECT count(*) FROM ZPLAYERPROFILE"), "1")
        // Every insert is in the report, under the store's new key.
        let inserted = entries(document, rule: "insert")
        XCTAssertEqual(inserted.count, 5)
        XCTAssertTrue(inserted.contains { $0["entity"] as? String == "GameSession" && $0["_pk"] as? Int == 9 && $0["new"] as? Int == 2 })

        // Merging twice equals merging once: the second merge finds nothing and touches nothing.
        let afterOnce = files(device).filter { !$0.key.contains("questbak-backup") }
        let again = try merge(archive, into: device)
        XCTAssertEqual(again["unchanged"] as? Bool, true, "\(again)")
        XCTAssertEqual(files(device).filter { !$0.key.contains("questbak-backup") }, afterOnce)
    }

    /// A second device before its first sync: its own routine, sessions and profile, plus copies
    /// of the first device's routines made under fresh cloudIDs. Every record of both is kept,
    /// none twice.
    func testSecondDeviceKeepsEveryRecordOfBothWithNoDuplicates() throws {
        let directory = try TemporaryTestDirectory()
        let first = try directory.copyFixture("v2-typical", as: "first")
        let archive = directory.path("first.qbak")
        try export(first, to: archive)
        let second = try directory.copyFixture("v2-typical", as: "second")
        _ = try sql(
            second,
            """
            DELETE FROM ZTASKESTIMATION; DELETE FROM ZGAMESESSION; DELETE FROM ZROUTINETASK WHERE ZROUTINE <> 1;
            DELETE FROM ZROUTINE WHERE Z_PK <> 1;
            UPDATE ZROUTINE SET ZCLOUDID = lower(ZCLOUDID);
            UPDATE ZROUTINETASK SET ZCLOUDID = '5' || substr(ZCLOUDID, 2);
            INSERT INTO ZROUTINE (Z_PK, Z_ENT, Z_OPT, ZISACTIVE, ZCREATEDAT, ZUPDATEDAT, ZNAME, ZDISPLAYNAME, ZACTIVEDAYS, ZCLOUDID)
              SELECT 9, Z_ENT, 1, 1, 763200000, 763200000, 'homework', 'Homework', ZACTIVEDAYS, '99999999-9999-4999-8999-999999999999'
              FROM ZROUTINE WHERE Z_PK = 1;
            INSERT INTO ZGAMESESSION (Z_PK, Z_ENT, Z_OPT, ZROUTINE, ZSTARTEDAT, ZISCALIBRATION, ZXPEARNED, ZCLOUDID)
              VALUES (1, 1, 1, 9, 763200100, 0, 10, '88888888-8888-4888-8888-888888888888');
            UPDATE ZPLAYERPROFILE SET ZTOTALXP = 10, ZCURRENTSTREAK = 1;
            UPDATE Z_PRIMARYKEY SET Z_MAX = 9 WHERE Z_NAME = 'Routine';
            """)
        let document = try merge(archive, into: second)
        XCTAssertEqual(try sql(second, "PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM ZROUTINE"), "4", "3 of the first device and the second's own")
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM (SELECT DISTINCT ZNAME, ZCREATEDAT FROM ZROUTINE)"), "4")
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM ZROUTINETASK"), try sql(first, "SELECT count(*) FROM ZROUTINETASK"))
        XCTAssertEqual(
            try sql(second, "SELECT count(*) FROM (SELECT DISTINCT ZROUTINE, ZNAME, ZORDERINDEX FROM ZROUTINETASK)"),
            try sql(second, "SELECT count(*) FROM ZROUTINETASK"))
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM ZGAMESESSION"), "7")
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM ZTASKESTIMATION"), try sql(first, "SELECT count(*) FROM ZTASKESTIMATION"))
        XCTAssertEqual(try sql(second, "SELECT count(*) FROM ZPLAYERPROFILE"), "1")
        XCTAssertEqual(try sql(second, "SELECT ZTOTALXP FROM ZPLAYERPROFILE"), "240")
        // The copies made under other cloudIDs keep the second device's, the first's superseded.
        XCTAssertEqual(
            try sql(second, "SELECT ZCLOUDID FROM ZROUTINE WHERE Z_PK = 1"),
            try sql(first, "SELECT lower(ZCLOUDID) FROM ZROUTINE WHERE Z_PK = 1"))
        let superseded = entries(document, rule: "supersede")
        XCTAssertEqual(Set(superseded.compactMap { $0["entity"] as? String }), ["Routine", "RoutineTask"])
        // The sessions of the first device name its routines by the second's keys.
        XCTAssertEqual(
            try sql(second, "SELECT count(*) FROM ZGAMESESSION s JOIN ZROUTINE r ON r.Z_PK = s.ZROUTINE"), "7",
            "every merged session points at a routine of the merged store")
        XCTAssertEqual(try merge(archive, into: second)["unchanged"] as? Bool, true)
    }

    func testPreferArchiveAndPreferNewerSettleConflicts() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical", as: "source")
        _ = try sql(source, "UPDATE ZROUTINE SET ZDISPLAYNAME = 'Archive ' || Z_PK, ZUPDATEDAT = 763000000 + Z_PK")
        let archive = directory.path("a.qbak")
        try export(source, to: archive)
        // The store edited routine 1 later than the archive, routine 2 earlier.
        let setUp = """
            UPDATE ZROUTINE SET ZDISPLAYNAME = 'Store ' || Z_PK, ZUPDATEDAT = CASE Z_PK WHEN 1 THEN 764000000 ELSE 762000000 END
            """
        for (preference, expected) in [
            ("store", "1|Store 1\n2|Store 2\n3|Store 3"), ("archive", "1|Archive 1\n2|Archive 2\n3|Archive 3"),
            ("newer", "1|Store 1\n2|Archive 2\n3|Archive 3"),
        ] {
            let store = try directory.copyFixture("v2-typical", as: "store-\(preference)")
            _ = try sql(store, setUp)
            let document = try merge(archive, into: store, ["--prefer", preference])
            XCTAssertEqual(try sql(store, "SELECT Z_PK, ZDISPLAYNAME FROM ZROUTINE ORDER BY Z_PK"), expected, preference)
            let conflicts = entries(document, rule: "conflict").filter { $0["field"] as? String == "displayName" }
            XCTAssertEqual(conflicts.count, 3, "\(preference): every conflict is reported, whoever won")
            if preference == "newer" {
                XCTAssertTrue(((document["notes"] as? [String]) ?? []).contains("newer by Routine.updatedAt"), "\(document["notes"] ?? "")")
            }
        }
    }

    func testAV1ArchiveMergesIntoAV2StoreByNaturalKeys() throws {
        let directory = try TemporaryTestDirectory()
        let v1 = try directory.copyFixture("v1-typical", as: "v1")
        let archive = directory.path("v1.qbak")
        try export(v1, to: archive)
        let store = directory.path("v2/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(try Questbak.run(["migrate", v1.path, "-o", store.path, "-q", "--now", "2026-01-01T00:00:00Z"]).status, 0)
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, true, "\(document)")
        XCTAssertEqual(document["schemaVersion"] as? String, "2.0.0")
    }

    /// Another app's store, by its own model: a many-to-many link, a sub-entity's record with a
    /// to-one, a fill and a conflict; `Z_MAX` raised on the table's root only.
    func testAnotherAppsStoreMergesByItsModel() throws {
        let directory = try TemporaryTestDirectory()
        let original = try directory.copyFixture("AnyApp/kitchen-sink", as: "original")
        let archive = directory.path("ks.qbak")
        try export(original, to: archive)
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "device")
        _ = try sql(
            store,
            """
            DELETE FROM Z_5TAGS WHERE Z_5RECIPES = 4 AND Z_7TAGS = 4; DELETE FROM ZINGREDIENT WHERE Z_PK = 5;
            UPDATE ZRECIPE SET ZSERVINGS = 99, ZMEMO = NULL WHERE Z_PK = 1;
            INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZCOLOR, ZLABEL) VALUES (9, 7, 1, 3, 'new-on-device'); INSERT INTO Z_5TAGS VALUES (2, 9);
            UPDATE Z_PRIMARYKEY SET Z_MAX = 9 WHERE Z_NAME = 'Tag';
            """)
        let document = try merge(archive, into: store)
        XCTAssertEqual(try sql(store, "PRAGMA integrity_check"), "ok")
        XCTAssertEqual(try sql(store, "SELECT Z_5RECIPES, Z_7TAGS FROM Z_5TAGS ORDER BY 1, 2"), "1|1\n1|2\n2|1\n2|9\n4|2\n4|4")
        XCTAssertEqual(
            try sql(store, "SELECT Z_PK, Z_ENT, ZRECIPE FROM ZINGREDIENT WHERE ZNAME = 'Salt'"),
            try sql(original, "SELECT 7, Z_ENT, ZRECIPE FROM ZINGREDIENT WHERE ZNAME = 'Salt'"))
        XCTAssertEqual(try sql(store, "SELECT ZSERVINGS, length(CAST(ZMEMO AS BLOB)) FROM ZRECIPE WHERE Z_PK = 1"), "99|38")
        XCTAssertEqual(
            try sql(store, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Ingredient', 'Liquid', 'Solid', 'Tag') ORDER BY 1"),
            "Ingredient|7\nLiquid|0\nSolid|0\nTag|9")
        XCTAssertEqual(entries(document, rule: "link").count, 1)
        XCTAssertEqual(entries(document, rule: "fill").count, 1)
        XCTAssertEqual(entries(document, rule: "conflict").first?["new"] as? Int, 99)
        XCTAssertEqual(entries(document, rule: "conflict").first?["old"] as? Int, 2)
        XCTAssertEqual(try sql(store, "SELECT count(*) FROM sqlitemanager_extras"), "2")
        let again = try merge(archive, into: store)
        XCTAssertEqual(again["unchanged"] as? Bool, true, "\(again)")
    }

    // MARK: Refusals

    func testWhatCannotBeMergedIsRefusedAndTheStoreLeftAlone() throws {
        let directory = try TemporaryTestDirectory()
        let timeQuest = try directory.copyFixture("v2-typical", as: "tq")
        let kitchenSink = try directory.copyFixture("AnyApp/kitchen-sink", as: "ks")
        let bennie = try directory.copyFixture("AnyApp/bennie-game", as: "bennie")
        let (tqArchive, ksArchive, bennieArchive) = (directory.path("tq.qbak"), directory.path("ks.qbak"), directory.path("b.qbak"))
        try export(timeQuest, to: tqArchive)
        try export(kitchenSink, to: ksArchive)
        try export(bennie, to: bennieArchive)
        let before = [timeQuest, kitchenSink, bennie].map(files)
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["import", ksArchive.path, "--merge", "--into", timeQuest.path], 65, "another app's store"),
            (["import", tqArchive.path, "--merge", "--into", kitchenSink.path], 65, "TimeQuest archive"),
            // Another app's archive: the apps differ (not "migrate the older store first").
            (["import", bennieArchive.path, "--merge", "--into", kitchenSink.path], 65, "is not of the same app as"),
            (["import", tqArchive.path, "--merge", "--into", directory.path("missing/default.store").path], 66, "missing"),
            (["import", tqArchive.path, "--merge"], 64, "--merge needs --into"),
            (["import", tqArchive.path, "--merge", "--into", timeQuest.path, "--replace"], 64, "leave out --replace"),
            (["import", tqArchive.path, "--into", timeQuest.path, "--prefer", "archive"], 64, "need --merge"),
            (
                ["import", tqArchive.path, "--merge", "--into", timeQuest.path, "--prefer", "newer", "--newer-by", "Routine"], 64,
                "Entity.property"
            ),
            (
                ["import", tqArchive.path, "--merge", "--into", timeQuest.path, "--prefer", "newer", "--newer-by", "Routine.name"], 64,
                "Routine.name cannot say which copy is newer: it is not a date"
            ),
            (
                ["import", tqArchive.path, "--merge", "--into", timeQuest.path, "--prefer", "newer", "--newer-by", "Nope.updatedAt"], 64,
                "no entity Nope"
            ),
        ]
        for (arguments, status, message) in cases {
            let result = try Questbak.run(arguments)
            XCTAssertEqual(result.status, status, "\(arguments): \(result.standardError)")
            XCTAssertTrue(result.standardError.contains(message), "\(arguments): \(result.standardError)")
        }
        XCTAssertEqual([timeQuest, kitchenSink, bennie].map(files), before)
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).contains("missing"))
    }

    /// Rows of a table no entity owns (another tool's) are not merged, and never left out unsaid.
    func testRowsOfAnotherToolsTableAreNamedNotDroppedSilently() throws {
        let directory = try TemporaryTestDirectory()
        let store = try directory.copyFixture("AnyApp/kitchen-sink", as: "store")
        let archive = directory.path("own.qbak")
        try export(store, to: archive)
        _ = try sql(store, "DELETE FROM sqlitemanager_extras WHERE id = 1")
        let before = files(store)
        let document = try merge(archive, into: store)
        XCTAssertEqual(document["unchanged"] as? Bool, true)
        XCTAssertEqual(files(store), before)
        XCTAssertTrue(
            ((document["notes"] as? [String]) ?? []).contains {
                $0.hasPrefix("the archive's table sqlitemanager_extras has 1 row(s) the store's has not")
            },
            "\(document["notes"] ?? "")")
    }

    func testAStoreWhoseKeysAreUsedUpIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryTestDirectory()
        let source = try directory.copyFixture("v2-typical", as: "source")
        let archive = directory.path("a.qbak")
        try export(source, to: archive)
        let store = try directory.copyFixture("v2-typical", as: "store")
        _ = try sql(
            store,
            "DELETE FROM ZTASKESTIMATION WHERE ZSESSION = 2; DELETE FROM ZGAMESESSION WHERE Z_PK = 2; UPDATE Z_PRIMARYKEY SET Z_MAX = 9223372036854775807 WHERE Z_NAME = 'GameSession'"
        )
        let before = files(store)
        let result = try Questbak.run(["import", archive.path, "--merge", "--into", store.path])
        XCTAssertEqual(result.status, 65, result.standardError)
        XCTAssertTrue(result.standardError.contains("there is no room for the archive's 1 new GameSession records"), result.standardError)
        XCTAssertEqual(files(store), before)
    }

    func testAnArchiveThatNeedsRepairsIsRefusedWithoutValidate() throws {
        let directory = try TemporaryTestDirectory()
        let damaged = try directory.copyFixture("v1-anomalies", as: "damaged")
        let archive = directory.path("damaged.qbak")
        try export(damaged, to: archive)
        let store = directory.path("v2/default.store")
        try FileManager.default.createDirectory(at: store.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(
            try Questbak.run([
                "migrate", try directory.copyFixture("v1-typical", as: "v1").path, "-o", store.path, "-q", "--now", "2026-01-01T00:00:00Z",
            ]).status,
            0)
        let before = files(store)
        let refused = try Questbak.run(["import", archive.path, "--merge", "--into", store.path])
        XCTAssertEqual(refused.status, 2, refused.standardError)
        XCTAssertEqual(files(store), before)
        let document = try merge(archive, into: store, ["--validate"])
        XCTAssertFalse(((document["archiveRepairs"] as? [String: Int]) ?? [:]).isEmpty)
        XCTAssertEqual(try sql(store, "PRAGMA integrity_check"), "ok")
    }
}
