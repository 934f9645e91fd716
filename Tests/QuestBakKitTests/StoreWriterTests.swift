import GRDB
import QuestBakArchive
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class StoreWriterTests: XCTestCase {
    func edgeCases() -> FixtureGenerator.Fixture { FixtureGenerator.all.first { $0.name == "v1-edge-cases" }! }

    func testWrittenStoreHasTheCoreDataLayout() throws {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        let fixture = FixtureGenerator.all.first { $0.name == "v2-typical" }!
        try fixture.dataset.write(to: url, uuid: "UUID-1")
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path + "-wal"), "a finished store leaves no WAL behind")
        XCTAssertFalse(FileManager.default.fileExists(atPath: url.path + "-shm"))
        let header = try Data(contentsOf: url).prefix(100)
        XCTAssertEqual(header.prefix(16), Data("SQLite format 3\0".utf8))
        XCTAssertEqual(header[18], 2, "WAL mode is recorded in the file header")
        try DatabaseQueue(path: url.path).read { db in
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA integrity_check"), "ok")
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA page_size"), 4096)
            XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"), 2)
            XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA journal_mode"), "wal")
            XCTAssertEqual(
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master ORDER BY rowid"),
                [
                    "ZGAMESESSION", "ZPLAYERPROFILE", "ZROUTINE", "ZROUTINETASK", "ZTASKESTIMATION",
                    "ZGAMESESSION_ZROUTINE_INDEX", "ZROUTINETASK_ZROUTINE_INDEX", "ZTASKESTIMATION_ZSESSION_INDEX",
                    "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE",
                    "ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING",
                    "ACHANGE_ZTRANSACTIONID_INDEX", "ATRANSACTION_ZAUTHORTS_INDEX", "ATRANSACTION_ZBUNDLEIDTS_INDEX",
                    "ATRANSACTION_ZCONTEXTNAMETS_INDEX", "ATRANSACTION_ZPROCESSIDTS_INDEX", "Z_TRANSACTION_TransactionAuthorIndex",
                    "Z_TRANSACTION_TransactionTimestampIndex", "Z_TRANSACTIONSTRING_UNIQUE_NAME",
                ])
            let keys = try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
                "\($0[0] as Int64) \($0[1] as String) \($0[2] as Int64) \($0[3] as Int64)"
            }
            XCTAssertEqual(
                keys,
                [
                    "1 GameSession 0 6", "2 PlayerProfile 0 1", "3 Routine 0 3", "4 RoutineTask 0 12", "5 TaskEstimation 0 24",
                    "16001 CHANGE 0 0", "16002 TRANSACTION 0 0", "16003 TRANSACTIONSTRING 0 0",
                ])
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM ZROUTINE WHERE Z_ENT <> 3 OR Z_OPT < 1"), 0)
            XCTAssertEqual(try Int.fetchOne(db, sql: "SELECT count(*) FROM ACHANGE"), 0)
            let metadata = try StoreReader.metadata(db, path: url.path)
            XCTAssertEqual(metadata.uuid, "UUID-1")
            XCTAssertEqual(metadata.versionIdentifiers, ["2.0.0"])
            XCTAssertEqual(metadata.entityHashes, ModelVersionHashes(declaration: TimeQuestSchemas.v2).entityHashes)
            XCTAssertEqual(metadata.frameworkVersion, StoreMetadata.defaultFrameworkVersion)
        }
    }

    func testWrittenStoreReadsBackIdentically() throws {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        let fixture = edgeCases()
        try fixture.dataset.write(to: url, uuid: fixture.uuid)
        let snapshot = try StoreSnapshot(storeAt: url)
        try snapshot.read { db in
            let version = ModelVersion(schema: fixture.dataset.schema)
            for entity in fixture.dataset.schema.entities {
                let read = try StoreReader.records(db, version: version, entity: entity.name, path: url.path)
                XCTAssertEqual(read, fixture.dataset.records[entity.name] ?? [], entity.name)
            }
        }
    }

    /// A schema's store is laid out by the same rules as a model's (`ModelTables`): a DECIMAL
    /// column among the FLOAT and TIMESTAMP ones, the hidden column of a to-many without an
    /// inverse on the destination's table; and it reads back and matches its schema.
    func testASchemaStoreIsLaidOutByTheModelRules() throws {
        let schema = Schema(
            versionIdentifier: "1.0",
            entities: [
                Entity(
                    name: "Order",
                    attributes: [Attribute("total", .decimal), Attribute("placedAt", .date), Attribute("note", .string, optional: true)],
                    relationships: [Relationship("lines", to: "Line", inverse: nil, toMany: true)]),
                Entity(name: "Line", attributes: [Attribute("quantity", .integer)]),
            ])
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        let order = EntityRecord(primaryKey: 1, values: ["total": .decimal("12.5"), "placedAt": .date(700_000_000), "note": .null])
        try StoreWriter.write(to: url, schema: schema) { sink in
            try sink.insert(order, into: "Order")
            try sink.insert(EntityRecord(primaryKey: 1, values: ["quantity": .integer(3)]), into: "Line")
            return StoreWriter.Bookkeeping(metadata: StoreMetadata(declaration: schema, uuid: "UUID-2"))
        }
        try StoreSnapshot(storeAt: url).read { db in
            XCTAssertEqual(
                try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE name IN ('ZORDER', 'ZLINE') ORDER BY name"),
                [
                    "CREATE TABLE ZLINE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZQUANTITY INTEGER, Z2LINES INTEGER )",
                    "CREATE TABLE ZORDER ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZPLACEDAT TIMESTAMP, ZTOTAL DECIMAL, ZNOTE VARCHAR )",
                ])
            let version = ModelVersion(schema: schema)
            XCTAssertEqual(try StoreReader.differences(db, from: version), [])
            XCTAssertEqual(try StoreReader.records(db, version: version, entity: "Order", path: url.path), [order])
        }
    }

    /// A record written by a schema has a place for attributes and to-one keys only: the links of
    /// a to-many without an inverse (on the destination's table) are refused by name rather than
    /// left out of the member without a word.
    func testASchemaMemberRefusesWhatItsRecordsHaveNoPlaceFor() throws {
        let schema = Schema(
            versionIdentifier: "1.0",
            entities: [
                Entity(
                    name: "Order", attributes: [Attribute("total", .decimal)],
                    relationships: [Relationship("lines", to: "Line", inverse: nil, toMany: true)]),
                Entity(name: "Line", attributes: [Attribute("quantity", .integer)]),
            ])
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        try StoreWriter.write(to: url, schema: schema) { _ in
            StoreWriter.Bookkeeping(metadata: StoreMetadata(declaration: schema, uuid: "UUID-3"))
        }
        let version = ModelVersion(schema: schema)
        try StoreSnapshot(storeAt: url).read { db in
            XCTAssertThrowsError(
                try EntityMemberEncoding.encode(db, version: version, entity: version.entity(named: "Order")!, path: url.path) { _ in }
            ) { error in
                let message = (error as? StoreError)?.errorDescription ?? "\(error)"
                XCTAssertTrue(message.contains("Order.lines is a to-many without an inverse"), message)
            }
            // The other entity's member has nothing it cannot place.
            XCTAssertEqual(
                try EntityMemberEncoding.encode(db, version: version, entity: version.entity(named: "Line")!, path: url.path) { _ in }, 0)
        }
    }

    func testMaximumPrimaryKeyKeepsTheFloorAboveTheLargestKey() throws {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append(
            "Routine", 4,
            [
                "name": .string("a"), "displayName": .string("A"), "activeDays": .integerArray([]), "isActive": .boolean(true),
                "createdAt": .date(0), "updatedAt": .date(0),
            ])
        dataset.maximumPrimaryKeyFloor = ["Routine": 10, "GameSession": 3]
        try dataset.write(to: url, uuid: "U")
        let maxima = try DatabaseQueue(path: url.path).read {
            try Dictionary(
                uniqueKeysWithValues: Row.fetchAll($0, sql: "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY").map {
                    ($0[0] as String, $0[1] as Int64)
                })
        }
        XCTAssertEqual(maxima["Routine"], 10)
        XCTAssertEqual(maxima["GameSession"], 3)
        XCTAssertEqual(maxima["RoutineTask"], 0)
    }

    func testRefusesToOverwriteAndLeavesNothingOnFailure() throws {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("default.store")
        try Data("keep me".utf8).write(to: url)
        XCTAssertThrowsError(try Dataset(schema: TimeQuestSchemas.v1).write(to: url, uuid: "U"))
        XCTAssertEqual(try Data(contentsOf: url), Data("keep me".utf8))

        let failing = directory.path("failing.store")
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        let routine: [String: Value] = [
            "name": .string("a"), "displayName": .string("A"), "activeDays": .integerArray([]), "isActive": .boolean(true),
            "createdAt": .date(0), "updatedAt": .date(0),
        ]
        dataset.append("Routine", 1, routine)
        dataset.append("Routine", 1, routine)  // duplicate Z_PK: the insert fails
        XCTAssertThrowsError(try dataset.write(to: failing, uuid: "U")) { error in
            guard case StoreError.sqlite(_, let code, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(code, 19, "SQLITE_CONSTRAINT")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), ["default.store"])
    }
}

final class SchemaDetectionTests: XCTestCase {
    func detect(_ url: URL) throws -> ModelVersion {
        try StoreSnapshot(storeAt: url).read { try StoreReader.detectVersion($0, path: url.path, candidates: TimeQuestSchemas.versions) }
    }

    func testDetectsBothVersions() throws {
        let directory = try TemporaryTestDirectory()
        XCTAssertEqual(try detect(directory.copyFixture("v1-typical")).versionIdentifier, "1.0.0")
        XCTAssertEqual(try detect(directory.copyFixture("v2-typical")).versionIdentifier, "2.0.0")
    }

    func testAMissingColumnIsNamed() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v1-typical")
        try DatabaseQueue(path: url.path).write { try $0.execute(sql: "ALTER TABLE ZTASKESTIMATION DROP COLUMN ZRATINGRAWVALUE") }
        XCTAssertThrowsError(try detect(url)) { error in
            guard case StoreError.schemaMismatch(_, "1.0.0", let differences) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(differences, ["ZTASKESTIMATION: missing column ZRATINGRAWVALUE (TaskEstimation.ratingRawValue)"])
            XCTAssertTrue(error.localizedDescription.contains("says it is schema 1.0.0"), error.localizedDescription)
        }
    }

    func testWrongTypeAndMissingTableAreNamed() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v2-typical")
        try DatabaseQueue(path: url.path).write { db in
            try db.execute(sql: "DROP TABLE ZPLAYERPROFILE")
            try db.execute(sql: "ALTER TABLE ZROUTINE RENAME COLUMN ZNAME TO ZOLDNAME")
            try db.execute(sql: "ALTER TABLE ZROUTINE ADD COLUMN ZNAME BLOB")
        }
        XCTAssertThrowsError(try detect(url)) { error in
            guard case StoreError.schemaMismatch(_, "2.0.0", let differences) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(
                Set(differences),
                [
                    "missing table ZPLAYERPROFILE (entity PlayerProfile)",
                    "ZROUTINE.ZNAME: type BLOB, expected VARCHAR",
                    "ZROUTINE: unexpected column ZOLDNAME",
                ])
        }
    }

    func testANewerVersionIsRefusedByName() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v2-typical")
        try rewriteMetadata(url) { _ in ["3.0.0"] }
        XCTAssertThrowsError(try detect(url)) { error in
            XCTAssertEqual(
                error as? StoreError, .unsupportedVersion(path: url.path, versionIdentifiers: ["3.0.0"], supported: ["1.0.0", "2.0.0"]))
        }
    }

    func testWithoutAVersionIdentifierTheTablesDecide() throws {
        let directory = try TemporaryTestDirectory()
        let url = try directory.copyFixture("v2-typical")
        try rewriteMetadata(url) { _ in nil }
        XCTAssertEqual(try detect(url).versionIdentifier, "2.0.0")
    }

    func testPlainSQLiteIsNotACoreDataStore() throws {
        let directory = try TemporaryTestDirectory()
        let url = directory.path("plain.sqlite")
        try DatabaseQueue(path: url.path).write { try $0.execute(sql: "CREATE TABLE t (x)") }
        XCTAssertThrowsError(try detect(url)) { error in
            XCTAssertEqual(error as? StoreError, .notACoreDataStore(path: url.path, missingTables: ["Z_PRIMARYKEY", "Z_METADATA"]))
        }
    }

    func rewriteMetadata(_ url: URL, identifiers: ([String]) -> [String]?) throws {
        try DatabaseQueue(path: url.path).write { db in
            let metadata = try StoreReader.metadata(db, path: url.path)
            guard case .dictionary(var entries) = metadata.plist else { return XCTFail("plist is not a dictionary") }
            if let replaced = identifiers(metadata.versionIdentifiers) {
                entries["NSStoreModelVersionIdentifiers"] = .array(replaced.map { .string($0) })
            } else {
                entries["NSStoreModelVersionIdentifiers"] = nil
            }
            try db.execute(sql: "UPDATE Z_METADATA SET Z_PLIST = ?", arguments: [BinaryPropertyList.encode(.dictionary(entries))])
        }
    }
}
