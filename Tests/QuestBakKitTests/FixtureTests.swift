import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// Opens every committed fixture through the store layer and checks it against the generator's
/// data and against plain SQL run on a separate copy.
final class FixtureTests: XCTestCase {
    /// Reads every record of every entity through the code under test.
    func readAll(_ url: URL) throws -> (version: ModelVersion, records: [String: [EntityRecord]]) {
        let snapshot = try StoreSnapshot(storeAt: url)
        return try snapshot.read { db in
            let version = try StoreReader.detectVersion(db, path: url.path, candidates: TimeQuestSchemas.versions)
            var records: [String: [EntityRecord]] = [:]
            for entity in version.entities {
                records[entity.name] = try StoreReader.records(db, version: version, entity: entity.name, path: url.path)
            }
            return (version, records)
        }
    }

    /// Row counts by plain SQL on a private copy, independent of the store layer.
    func sqlCounts(_ url: URL) throws -> [String: Int] {
        let directory = try TemporaryTestDirectory()
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: url.path + suffix) {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: directory.path("copy.store").path + suffix)
        }
        let queue = try DatabaseQueue(path: directory.path("copy.store").path)
        return try queue.read { db in
            var counts: [String: Int] = [:]
            for table in ["ZGAMESESSION", "ZPLAYERPROFILE", "ZROUTINE", "ZROUTINETASK", "ZTASKESTIMATION"] {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
            }
            return counts
        }
    }

    func testEveryFixtureReadsBackAsGenerated() throws {
        for fixture in FixtureGenerator.all {
            let directory = try TemporaryTestDirectory()
            let url = try directory.copyFixture(fixture.name)
            let (version, records) = try readAll(url)
            XCTAssertEqual(version, ModelVersion(schema: fixture.dataset.schema), fixture.name)
            var expected = fixture.dataset.records
            for (entity, tail) in fixture.walTail?.records ?? [:] { expected[entity, default: []] += tail }
            if fixture.walTail != nil {
                // The WAL tail also saved the profile again.
                expected["PlayerProfile"] = expected["PlayerProfile"]?.map { record in
                    var record = record
                    if case .integer(let xp) = record["totalXP"] { record["totalXP"] = .integer(xp + 40) }
                    record.opt = 2  // a second save
                    return record
                }
            }
            for entity in version.entities {
                XCTAssertEqual(records[entity.name] ?? [], expected[entity.name] ?? [], "\(fixture.name) \(entity.name)")
            }
            let counts = try sqlCounts(url)
            XCTAssertEqual(counts["ZTASKESTIMATION"], expected["TaskEstimation"]?.count, fixture.name)
            XCTAssertEqual(counts["ZPLAYERPROFILE"], expected["PlayerProfile"]?.count, fixture.name)
        }
    }

    func testExactCountsOfTheTypicalFixture() throws {
        let directory = try TemporaryTestDirectory()
        let counts = try sqlCounts(try directory.copyFixture("v1-typical"))
        XCTAssertEqual(counts, ["ZROUTINE": 3, "ZROUTINETASK": 12, "ZGAMESESSION": 9, "ZTASKESTIMATION": 36, "ZPLAYERPROFILE": 1])
    }

    func testEdgeCaseValuesAreStoredExactly() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v1-edge-cases")
        let queue = try DatabaseQueue(path: url.path)
        try queue.read { db in
            let row = try XCTUnwrap(
                Row.fetchOne(db, sql: "SELECT ZDISPLAYNAME, ZCREATEDAT, ZUPDATEDAT, ZISACTIVE FROM ZROUTINE WHERE Z_PK = 2"))
            XCTAssertEqual(row[0] as String, "She said \"hi\"\nthen 'bye'\t\\ done")
            XCTAssertEqual((row[1] as Double).bitPattern, (-31_536_000.25).bitPattern)
            XCTAssertEqual(row[2] as Double, -978_307_200)
            XCTAssertEqual(row[3] as Int64, 0)
            XCTAssertEqual(
                try String.fetchOne(db, sql: "SELECT ZDISPLAYNAME FROM ZROUTINE WHERE Z_PK = 1"), "Morning ☀️🪥 — café «naïve» 日本語")
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT ZREFERENCEDURATIONSECONDS FROM ZROUTINETASK WHERE Z_PK = 1"), Int64.max)
            XCTAssertTrue(
                try Row.fetchOne(db, sql: "SELECT ZREFERENCEDURATIONSECONDS FROM ZROUTINETASK WHERE Z_PK = 3")![0] == nil as Int64?)
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT ZXPEARNED FROM ZGAMESESSION WHERE Z_PK = 1"), Int64.min)
            XCTAssertEqual(try Double.fetchOne(db, sql: "SELECT ZACTUALSECONDS FROM ZTASKESTIMATION WHERE Z_PK = 1"), 1e300)
        }
        let records = try readAll(url).records
        let routines = try XCTUnwrap(records["Routine"])
        let week: [Int64] = Array(1...7)
        XCTAssertEqual(routines[1]["activeDays"], Value.integerArray(week + week + [0, -1, Int64.max, Int64.min]))
        XCTAssertEqual(routines[0]["activeDays"], Value.integerArray([]))
        XCTAssertEqual(records["GameSession"]?.first?["completedAt"], Value.null)
    }

    func testNewestRowsOfTheWALFixtureAreOnlyInItsWAL() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v1-wal")
        // The main file alone, as a reader that copies only the .store would see it.
        let mainOnly = directory.path("main-only.store")
        try FileManager.default.copyItem(at: url, to: mainOnly)
        let mainCount = try DatabaseQueue(path: mainOnly.path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM ZTASKESTIMATION") }
        XCTAssertEqual(mainCount, 4)
        let snapshot = try StoreSnapshot(storeAt: url)
        XCTAssertGreaterThan(snapshot.walFrameCount, 0)
        XCTAssertEqual(try snapshot.read { try StoreReader.rowCount($0, table: "ZTASKESTIMATION") }, 8)
        XCTAssertEqual(try snapshot.read { try StoreReader.entityKeys($0).first { $0.name == "TaskEstimation" }?.maximumPrimaryKey }, 8)
    }

    func testReadingLeavesTheSourceDirectoryByteIdentical() throws {
        for name in ["v1-wal", "v2-typical"] {
            let directory = try TemporaryTestDirectory()
            let url = try directory.copyFixture(name)
            let folder = url.deletingLastPathComponent()
            let before = try DirectoryState(of: folder)
            _ = try readAll(url)
            _ = try StoreInspection(snapshot: StoreSnapshot(storeAt: url), candidates: TimeQuestSchemas.versions)
            XCTAssertEqual(try DirectoryState(of: folder), before, name)
        }
    }

    /// The committed fixtures are exactly what the generator makes: a changed generator needs an
    /// intentional `make fixtures`, never a silent rewrite.
    func testCommittedFixturesMatchTheGenerator() throws {
        let directory = try TemporaryTestDirectory()
        try FixtureGenerator.writeAll(to: directory.url)
        for fixture in FixtureGenerator.all {
            for suffix in ["", "-wal", "-shm"] {
                let committed = Repository.fixtures.appendingPathComponent("\(fixture.name)/default.store\(suffix)")
                let generated = directory.path("\(fixture.name)/default.store\(suffix)")
                XCTAssertEqual(
                    FileManager.default.fileExists(atPath: committed.path), FileManager.default.fileExists(atPath: generated.path),
                    committed.path)
                if FileManager.default.fileExists(atPath: generated.path) {
                    XCTAssertEqual(
                        try Data(contentsOf: committed), try Data(contentsOf: generated),
                        "\(committed.path) differs; run `make fixtures` if the generator changed on purpose")
                }
            }
        }
        XCTAssertEqual(
            try Data(contentsOf: Repository.fixtures.appendingPathComponent("README.md")), try Data(contentsOf: directory.path("README.md"))
        )
    }
}
