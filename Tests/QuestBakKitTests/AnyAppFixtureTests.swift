import Foundation
import GRDB
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

/// The stores of other apps in `Fixtures/AnyApp/`: generated from their compiled models, carrying
/// those models in `Z_MODELCACHE`, and laid out as the spec describes. Every store is copied to a
/// temporary directory before it is opened: opening SQLite can write `-shm`.
final class AnyAppFixtureTests: XCTestCase {
    static let committed = Repository.fixtures.appendingPathComponent(AnyAppFixtures.folderName)

    /// Copies the fixture folder (store, sidecars, external data) and returns the copied store.
    func copy(_ name: String, into directory: TemporaryTestDirectory) throws -> URL {
        let destination = directory.path(name)
        try FileManager.default.copyItem(at: Self.committed.appendingPathComponent(name), to: destination)
        return destination.appendingPathComponent(AnyAppFixtures.storeFileName)
    }

    /// Regular files below `folder`, hidden ones included, as sorted relative paths.
    func files(under folder: URL) throws -> [String] {
        try (FileManager.default.subpathsOfDirectory(atPath: folder.path)).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: folder.appendingPathComponent(path).path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }.sorted()
    }

    func fixture(_ name: String) throws -> AnyAppFixtures.Fixture {
        try XCTUnwrap(AnyAppFixtures.all.first { $0.name == name })
    }

    // MARK: Generation

    /// The committed stores are exactly what the generator makes: a changed generator needs an
    /// intentional `make fixtures`, never a silent rewrite.
    func testCommittedStoresMatchTheGenerator() throws {
        let directory = try TemporaryTestDirectory()
        try AnyAppFixtures.writeAll(to: directory.url)
        let generated = directory.path(AnyAppFixtures.folderName)
        let names = try files(under: generated)
        XCTAssertEqual(try files(under: Self.committed), names)
        XCTAssertTrue(names.contains("kitchen-sink/default.store-wal"), "\(names)")
        XCTAssertTrue(names.contains("kitchen-sink/.default_SUPPORT/_EXTERNAL_DATA/\(AnyAppFixtures.externalPhotoName)"), "\(names)")
        for name in names {
            XCTAssertEqual(
                try Data(contentsOf: Self.committed.appendingPathComponent(name)),
                try Data(contentsOf: generated.appendingPathComponent(name)),
                "\(name) differs; run `make fixtures` if the generator changed on purpose")
        }
        for name in names where name.hasSuffix(".store") {
            let size = try Data(contentsOf: Self.committed.appendingPathComponent(name)).count
            XCTAssertLessThan(size, 200_000, name)
        }
    }

    // MARK: The store's own model

    func testEachStoreCarriesItsModelAndTheHashesOfThatModel() throws {
        for fixture in AnyAppFixtures.all {
            let directory = try TemporaryTestDirectory()
            let store = try copy(fixture.name, into: directory)
            let queue = try DatabaseQueue(path: store.path)
            try queue.read { db in
                let content = try XCTUnwrap(Data.fetchOne(db, sql: "SELECT Z_CONTENT FROM Z_MODELCACHE"), fixture.name)
                let model = try ModelCacheDecoder.decode(content)
                XCTAssertEqual(model.notes, [], fixture.name)
                XCTAssertEqual(model, fixture.store.model, fixture.name)
                let row = try XCTUnwrap(Row.fetchOne(db, sql: "SELECT Z_UUID, Z_PLIST FROM Z_METADATA"), fixture.name)
                let metadata = try StoreMetadata(uuid: row[0], encodedPlist: row[1])
                XCTAssertEqual(metadata.uuid, fixture.store.uuid)
                let hashes = ModelVersionHashes(model: model)
                XCTAssertEqual(metadata.entityHashes, hashes.entityHashes, fixture.name)
                XCTAssertEqual(metadata.plist["NSStoreModelVersionChecksumKey"], .string(hashes.checksum), fixture.name)
                XCTAssertEqual(metadata.plist["NSStoreModelVersionHashesDigest"], .string(hashes.digest), fixture.name)
                XCTAssertEqual(metadata.versionIdentifiers, model.versionIdentifiers, fixture.name)
                XCTAssertNil(metadata.versionMatchingHashes(in: TimeQuestSchemas.versions), fixture.name)
                XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA page_size"), 4096)
                XCTAssertEqual(try Int.fetchOne(db, sql: "PRAGMA auto_vacuum"), 2)
                XCTAssertEqual(try String.fetchOne(db, sql: "PRAGMA journal_mode"), "wal")
                XCTAssertEqual(try String.fetchAll(db, sql: "PRAGMA integrity_check"), ["ok"], fixture.name)
                // Creation order: entity tables and their indexes, bookkeeping, history, then the rest.
                let statements = try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
                let layout = try ModelTables(model: model)
                let expected = layout.createStatements + CoreDataSQL.bookkeeping + CoreDataSQL.history
                XCTAssertEqual(Array(statements.prefix(expected.count)), expected, fixture.name)
            }
            try queue.close()
            let text = try Questbak.run(["inspect", store.path]).standardOutput
            XCTAssertTrue(text.contains("decoded from the store (7 entities), hashes match"), text)
            XCTAssertTrue(text.contains("match no known TimeQuest schema"), text)
        }
    }

    /// An unversioned SwiftData app writes "1.0.0", as TimeQuest V1 does: nothing else matches.
    func testBennieGameIsNotTakenForTimeQuest() throws {
        let directory = try TemporaryTestDirectory()
        let store = try copy("bennie-game", into: directory)
        let inspection = try StoreInspection(snapshot: try StoreSnapshot(storeAt: store), candidates: TimeQuestSchemas.versions)
        XCTAssertEqual(inspection.versionIdentifiers, ["1.0.0"])
        XCTAssertNil(inspection.hashesMatchVersion)
        XCTAssertNil(inspection.schemaVersion)
        XCTAssertEqual(inspection.model?.hashesMatch, true)
    }

    func testVerifyMigrationLooksOnlyOneFolderDeep() throws {
        let stores = try MigrationVerifier(
            fixtures: Repository.fixtures, target: TimeQuestSchemas.newest, candidates: TimeQuestSchemas.versions
        )
        .fixtureStores()
        XCTAssertFalse(stores.isEmpty)
        XCTAssertFalse(stores.contains { $0.path.contains("/\(AnyAppFixtures.folderName)/") }, "\(stores)")
    }

    // MARK: The WAL

    func testTheWALOnlyRowsAreOnlyVisibleWithTheWAL() throws {
        let directory = try TemporaryTestDirectory()
        let store = try copy("kitchen-sink", into: directory)
        let mainOnly = directory.path("main-only.store")
        try FileManager.default.copyItem(at: store, to: mainOnly)
        func counts(_ url: URL) throws -> [String: Int64] {
            let queue = try DatabaseQueue(path: url.path)
            defer { try? queue.close() }
            return try queue.read { db in
                var counts: [String: Int64] = [:]
                for table in ["ZRECIPE", "ZTAG", "ZSTEP", "ZINGREDIENT", "Z_5TAGS", "ZAUTHOR", "sqlitemanager_extras"] {
                    counts[table] = try Int64.fetchOne(db, sql: "SELECT count(*) FROM \(table)")
                }
                counts["Recipe Z_MAX"] = try Int64.fetchOne(db, sql: "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Recipe'")
                counts["step 4 recipe"] = try Int64.fetchOne(db, sql: "SELECT Z5STEPS FROM ZSTEP WHERE Z_PK = 4")
                XCTAssertEqual(try String.fetchAll(db, sql: "PRAGMA integrity_check"), ["ok"], url.path)
                return counts
            }
        }
        XCTAssertEqual(
            try counts(mainOnly),
            [
                "ZRECIPE": 3, "ZTAG": 3, "ZSTEP": 4, "ZINGREDIENT": 5, "Z_5TAGS": 3, "ZAUTHOR": 2, "sqlitemanager_extras": 2,
                "Recipe Z_MAX": 3,
            ])
        XCTAssertEqual(
            try counts(store),
            [
                "ZRECIPE": 4, "ZTAG": 4, "ZSTEP": 5, "ZINGREDIENT": 6, "Z_5TAGS": 5, "ZAUTHOR": 2, "sqlitemanager_extras": 2,
                "Recipe Z_MAX": 4, "step 4 recipe": 4,
            ])
    }

    // MARK: The layout

    func testRelationshipsSubEntitiesAndIndexesAreLaidOutAsTheSpecSays() throws {
        let directory = try TemporaryTestDirectory()
        let store = try copy("kitchen-sink", into: directory)
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        try queue.read { db in
            func sql(_ name: String) throws -> String? {
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name])
            }
            func pairs(_ query: String) throws -> [[Int64?]] { try Row.fetchAll(db, sql: query).map { [$0[0], $0[1]] } }
            // Many-to-many: Recipe (5).tags ↔ Tag (7).recipes.
            XCTAssertEqual(
                try sql("Z_5TAGS"), "CREATE TABLE Z_5TAGS ( Z_5RECIPES INTEGER, Z_7TAGS INTEGER, PRIMARY KEY (Z_5RECIPES, Z_7TAGS) )")
            XCTAssertEqual(try sql("Z_5TAGS_Z_7TAGS_INDEX"), "CREATE INDEX Z_5TAGS_Z_7TAGS_INDEX ON Z_5TAGS (Z_7TAGS, Z_5RECIPES)")
            XCTAssertEqual(
                try pairs("SELECT Z_5RECIPES, Z_7TAGS FROM Z_5TAGS ORDER BY 1, 2"), [[1, 1], [1, 2], [2, 1], [4, 2], [4, 4]])
            // To-many without an inverse: Recipe.steps is Step's hidden Z5STEPS, with its own index.
            XCTAssertEqual(
                try sql("ZSTEP"),
                "CREATE TABLE ZSTEP ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZSECONDS INTEGER, Z5STEPS INTEGER, ZTEXT VARCHAR )"
            )
            XCTAssertEqual(try sql("ZSTEP_Z5STEPS_INDEX"), "CREATE INDEX ZSTEP_Z5STEPS_INDEX ON ZSTEP (Z5STEPS)")
            XCTAssertEqual(try pairs("SELECT Z_PK, Z5STEPS FROM ZSTEP ORDER BY Z_PK"), [[1, 1], [2, 1], [3, 2], [4, 4], [5, 4]])
            // To-ones, with and without an inverse, and the to-many with an inverse kept by them.
            XCTAssertEqual(
                try Row.fetchAll(db, sql: "SELECT Z_PK, ZAUTHOR, ZFEATUREDTAG FROM ZRECIPE ORDER BY Z_PK").map {
                    [$0[0], $0[1], $0[2]] as [Int64?]
                },
                [[1, 1, 2], [2, 2, nil], [3, nil, nil], [4, 1, 4]])
            XCTAssertEqual(try sql("ZRECIPE_ZAUTHOR_INDEX"), "CREATE INDEX ZRECIPE_ZAUTHOR_INDEX ON ZRECIPE (ZAUTHOR)")
            XCTAssertEqual(try sql("ZRECIPE_ZFEATUREDTAG_INDEX"), "CREATE INDEX ZRECIPE_ZFEATUREDTAG_INDEX ON ZRECIPE (ZFEATUREDTAG)")
            // Sub-entities: Liquid (3) and Solid (4) live in Ingredient's table; Z_SUPER names the parent.
            XCTAssertEqual(
                try pairs("SELECT Z_PK, Z_ENT FROM ZINGREDIENT ORDER BY Z_PK"), [[1, 3], [2, 3], [3, 4], [4, 3], [5, 4], [6, 3]])
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT ZGRAMS FROM ZINGREDIENT WHERE Z_ENT = 4 ORDER BY Z_PK"), [2, 1])
            XCTAssertEqual(
                try Row.fetchAll(db, sql: "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT").map {
                    "\($0[0] as Int64) \($0[1] as String) \($0[2] as Int64) \($0[3] as Int64)"
                },
                [
                    "1 Author 0 3", "2 Ingredient 0 6", "3 Liquid 2 0", "4 Solid 2 0", "5 Recipe 0 4", "6 Step 0 5", "7 Tag 0 4",
                    "16001 CHANGE 0 0", "16002 TRANSACTION 0 0", "16003 TRANSACTIONSTRING 0 0",
                ])
            // Uniqueness and #Index.
            XCTAssertEqual(
                try sql("Z_Recipe_UNIQUE_code"), "CREATE UNIQUE INDEX Z_Recipe_UNIQUE_code ON ZRECIPE (ZCODE COLLATE BINARY ASC)")
            XCTAssertEqual(
                try sql("Z_Recipe_SwiftDataIndexOnBinarycreatedAt"),
                "CREATE INDEX Z_Recipe_SwiftDataIndexOnBinarycreatedAt ON ZRECIPE (ZCREATEDAT COLLATE BINARY ASC)")
            XCTAssertEqual(
                try sql("Z_Recipe_SwiftDataIndexOnBinarynamecreatedAt"),
                "CREATE INDEX Z_Recipe_SwiftDataIndexOnBinarynamecreatedAt ON ZRECIPE (ZNAME COLLATE BINARY ASC, ZCREATEDAT COLLATE BINARY ASC)"
            )
            // The composite's elements: clashing names take suffixes; the array element is JSON text in a BLOB.
            let negroni = try XCTUnwrap(
                Row.fetchOne(
                    db,
                    sql:
                        "SELECT ZNAME, ZNAME1, ZNAME2, ZCOUNTRY, ZINTENSITY, ZFLAVORS, typeof(ZFLAVORS), ZCOST, typeof(ZCOST), ZCALORIES, ZCREATEDAT, hex(CAST(ZMEMO AS BLOB)), typeof(ZMEMO), ZKEYWORDS, ZIDENTIFIER, hex(ZPHOTO) FROM ZRECIPE WHERE Z_PK = 1"
                ))
            XCTAssertEqual(negroni[0] as String, "Negroni")
            XCTAssertEqual(negroni[1] as String, "Bittersweet")
            XCTAssertEqual(negroni[2] as String, "Caffè Casoni, Florence")
            XCTAssertEqual(negroni[3] as String, "Italy")
            XCTAssertEqual(negroni[4] as Int64, 7)
            XCTAssertEqual(negroni[5] as Data, Data(#"["Grapefruit","Anise"]"#.utf8))
            XCTAssertEqual(negroni[6] as String, "blob")
            XCTAssertEqual(negroni[7] as Int64, 100)
            XCTAssertEqual(negroni[8] as String, "integer")
            XCTAssertEqual(negroni[9] as Int64, Int64.max)
            XCTAssertLessThan(negroni[10] as Double, 0, "a date before 2001")
            XCTAssertEqual(
                negroni[11] as String, Data("Stir, don't shake.\u{0}Hidden after a NUL.".utf8).map { String(format: "%02X", $0) }.joined())
            XCTAssertEqual(negroni[12] as String, "text")
            XCTAssertEqual(
                try TransformableArray.unarchive(negroni[13] as Data), [.string("bitter"), .string("classic"), .string("café")])
            XCTAssertEqual((negroni[14] as Data).count, 16)
            // Held inline (inferred layout): 0x01 and the bytes.
            XCTAssertEqual(negroni[15] as String, "0189504E470D0A1A0A002A")
            let paloma = try XCTUnwrap(
                Row.fetchOne(
                    db, sql: "SELECT ZNAME, ZCOST, typeof(ZCOST), ZCALORIES, ZMEMO, ZNAME1, ZFLAVORS, ZPHOTO FROM ZRECIPE WHERE Z_PK = 2"))
            XCTAssertEqual(paloma[0] as String, "Paloma 🍹🇲🇽")
            XCTAssertEqual(paloma[1] as Double, 12.5)
            XCTAssertEqual(paloma[2] as String, "real")
            XCTAssertEqual(paloma[3] as Int64, Int64.min)
            XCTAssertEqual(paloma[4] as String, "")
            XCTAssertNil(paloma[5] as String?)
            XCTAssertNil(paloma[6] as Data?)
            // External storage (inferred layout): 0x02 and the name of the file beside the store.
            XCTAssertEqual(paloma[7] as Data, Data([0x02] + Array(AnyAppFixtures.externalPhotoName.utf8)))
            let file = ModelStoreWriter.externalDataFolder(for: store).appendingPathComponent(AnyAppFixtures.externalPhotoName)
            XCTAssertEqual(try Data(contentsOf: file), AnyAppFixtures.externalPhoto)
            XCTAssertEqual(
                file.path.dropFirst(directory.url.path.count),
                "/kitchen-sink/.default_SUPPORT/_EXTERNAL_DATA/\(AnyAppFixtures.externalPhotoName)")
            // A default fills a row with the one value the model archived.
            guard
                case .uuid(let defaultIdentifier)? = try self.fixture("kitchen-sink").store.model.entity(named: "Recipe")?.attributes.first(
                    where: { $0.name == "identifier" })?.defaultValue
            else { return XCTFail("no UUID default") }
            XCTAssertEqual(try Data.fetchOne(db, sql: "SELECT ZIDENTIFIER FROM ZRECIPE WHERE Z_PK = 3"), defaultIdentifier)
            XCTAssertEqual(try String.fetchAll(db, sql: "SELECT name FROM sqlitemanager_extras ORDER BY id"), ["last_opened", "window"])
        }
        try queue.write { db in
            XCTAssertThrowsError(
                try db.execute(sql: "INSERT INTO ZRECIPE (Z_PK, Z_ENT, Z_OPT, ZCODE) VALUES (99, 5, 1, 'NEGRONI')"),
                "the unique index holds")
        }
    }

    func testBennieGameHoldsTheSeedsPlayers() throws {
        let directory = try TemporaryTestDirectory()
        let store = try copy("bennie-game", into: directory)
        let queue = try DatabaseQueue(path: store.path)
        defer { try? queue.close() }
        try queue.read { db in
            XCTAssertEqual(
                try Row.fetchAll(
                    db, sql: "SELECT ZID, ZCOINS, ZTOTALCOINSEARNED, ZTODAYPLAYTIMEMINUTES, ZNUMBERRANGE FROM ZPLAYERDATA ORDER BY Z_PK"
                )
                .map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as Int64) \($0[3] as Int64) \($0[4] as Int64)" },
                ["alexander 12 47 23 20", "oliver 7 31 15 10"])
            XCTAssertEqual(
                try Row.fetchAll(
                    db,
                    sql:
                        "SELECT ZACTIVITYTYPE, ZCURRENTLEVEL, ZHIGHESTLEVELCOMPLETED, ZTOTALLEVELSCOMPLETED, ZPLAYER FROM ZACTIVITYPROGRESS ORDER BY Z_PK"
                ).map { "\($0[0] as String) \($0[1] as Int64) \($0[2] as Int64) \($0[3] as Int64) \($0[4] as Int64)" },
                ["raetsel_puzzle 5 4 12 1", "zahlen_wuerfel 3 2 8 1"])
            XCTAssertEqual(
                try sql(db, "Z_PlayerData_UNIQUE_id"), "CREATE UNIQUE INDEX Z_PlayerData_UNIQUE_id ON ZPLAYERDATA (ZID COLLATE BINARY ASC)")
            // The one-to-one keeps a key on both sides (inferred).
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT ZPARENTSETTINGS FROM ZAPPSETTINGS"), 1)
            XCTAssertEqual(try Int64.fetchOne(db, sql: "SELECT ZAPPSETTINGS FROM ZPARENTSETTINGS"), 1)
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT length(ZID) FROM ZSESSIONMETRICS"), [16, 16, 16])
            XCTAssertEqual(try Int64.fetchAll(db, sql: "SELECT ZPLAYER FROM ZSESSIONMETRICS ORDER BY Z_PK"), [1, 1, 2])
            XCTAssertEqual(
                try TransformableArray.unarchive(try XCTUnwrap(Data.fetchOne(db, sql: "SELECT ZLOCKEDACTIVITIES FROM ZPARENTSETTINGS"))),
                [.string("zahlen_waehle")])
            XCTAssertEqual(
                try String.fetchOne(db, sql: "SELECT ZTHUMBNAILURL FROM ZAPPROVEDVIDEO"), "https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg")
        }
    }

    func sql(_ db: Database, _ name: String) throws -> String? {
        try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name])
    }

    // MARK: The layout rules on the spec's own examples

    func testTheLayoutReproducesTheSpecsExamples() throws {
        typealias Code = CompiledAttribute.TypeCode
        let expenses = try ModelTables(
            model: CompiledModel(
                versionIdentifiers: ["1"],
                entities: [
                    CompiledEntity(
                        name: "Category",
                        relationships: [CompiledRelationship(name: "expenses", destination: "Expense", inverse: "categories", maxCount: 0)]),
                    CompiledEntity(
                        name: "Expense",
                        relationships: [CompiledRelationship(name: "categories", destination: "Category", inverse: "expenses", maxCount: 0)]
                    ),
                ]))
        XCTAssertEqual(
            expenses.joinTables.map(\.createStatement),
            ["CREATE TABLE Z_1EXPENSES ( Z_1CATEGORIES INTEGER, Z_2EXPENSES INTEGER, PRIMARY KEY (Z_1CATEGORIES, Z_2EXPENSES) )"])
        XCTAssertEqual(
            expenses.joinTables.map(\.indexStatement),
            ["CREATE INDEX Z_1EXPENSES_Z_2EXPENSES_INDEX ON Z_1EXPENSES (Z_2EXPENSES, Z_1CATEGORIES)"])
        let element = { (name: String) in CompiledAttribute(name: name, typeCode: Code.string, isOptional: true) }
        let cocktails = try ModelTables(
            model: CompiledModel(
                versionIdentifiers: ["1"],
                entities: [
                    CompiledEntity(
                        name: "Cocktail",
                        attributes: [
                            CompiledAttribute(name: "IngredientBase", typeCode: Code.composite, elements: [element("id")]),
                            CompiledAttribute(name: "prep", typeCode: Code.composite, elements: [element("id")]),
                        ],
                        relationships: [CompiledRelationship(name: "spec", destination: "Ingredient", maxCount: 0)]),
                    CompiledEntity(name: "Ingredient", attributes: [element("name")]),
                ]))
        XCTAssertEqual(
            cocktails.tables.map(\.createStatement),
            [
                "CREATE TABLE ZCOCKTAIL ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID VARCHAR, ZID1 VARCHAR )",
                "CREATE TABLE ZINGREDIENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, Z1SPEC INTEGER, ZNAME VARCHAR )",
            ])
        XCTAssertEqual(cocktails.tables[1].indexStatements, ["CREATE INDEX ZINGREDIENT_Z1SPEC_INDEX ON ZINGREDIENT (Z1SPEC)"])
        XCTAssertEqual(try cocktails.storage(of: "spec", from: "Cocktail"), .hiddenColumn(table: "ZINGREDIENT", column: "Z1SPEC"))
        // Sub-entities follow their parent, depth first, before the next name in the alphabet.
        let animals = try ModelTables(
            model: CompiledModel(
                versionIdentifiers: ["1"],
                entities: ["Animal", "Bird", "Cat", "Kitten"].map { name in
                    CompiledEntity(
                        name: name, superentity: ["Cat": "Animal", "Kitten": "Cat"][name], attributes: [element(name.lowercased())])
                }))
        XCTAssertEqual(animals.numberedEntities.map(\.name), ["Animal", "Cat", "Kitten", "Bird"])
        XCTAssertEqual(animals.tables.map(\.name), ["ZANIMAL", "ZBIRD"])
        XCTAssertEqual(animals.tables[0].columns.map(\.name), ["ZANIMAL", "ZCAT", "ZKITTEN"])
    }

    /// The one layout gives TimeQuest's tables exactly as the committed fixtures have them (made
    /// by the schema writer before its layout became a view of `ModelTables`): each table's
    /// `CREATE TABLE` and its indexes, in the order the store made them.
    func testTheLayoutAgreesWithTheCommittedTimeQuestTables() throws {
        for (fixture, version) in [("v1-typical", TimeQuestSchemas.v1), ("v2-typical", TimeQuestSchemas.v2)] {
            let directory = try TemporaryTestDirectory()
            let store = try directory.copyFixture(fixture)
            let layout = try ModelTables(model: CompiledModel(schema: version))
            let names = Set(layout.tables.map(\.name))
            let committed = try DatabaseQueue(path: store.path).read { db in
                try Row.fetchAll(db, sql: "SELECT type, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
                    .filter { names.contains($0["tbl_name"] as String) }
            }
            XCTAssertEqual(
                committed.filter { $0["type"] == "table" }.map { $0["sql"] as String }, layout.tables.map(\.createStatement), fixture)
            XCTAssertEqual(
                committed.filter { $0["type"] == "index" }.map { $0["sql"] as String }, layout.tables.flatMap(\.indexStatements), fixture)
            XCTAssertEqual(layout.joinTables, [], fixture)
        }
    }
}

/// The other apps' migration gates in `Fixtures/Gates/`: the committed stores are the
/// generator's, byte for byte (their golden dumps are recorded on purpose, not generated).
final class GateFixtureTests: XCTestCase {
    func testCommittedGateStoresMatchTheGenerator() throws {
        let directory = try TemporaryTestDirectory()
        try GateFixtures.writeAll(to: directory.url)
        for gate in GateFixtures.all {
            var stores = gate.fixtures.map {
                GateFixtures.fixturesFolder(gate, in: directory.url).appendingPathComponent("\($0.name)/default.store")
            }
            stores.append(GateFixtures.nextStore(gate, in: directory.url))
            for generated in stores {
                let relative = String(generated.path.dropFirst(directory.url.path.count + 1))
                let committed = Repository.fixtures.appendingPathComponent(relative)
                XCTAssertEqual(try Data(contentsOf: generated), try Data(contentsOf: committed), relative)
            }
            let goldens = try FileManager.default.subpathsOfDirectory(
                atPath: GateFixtures.fixturesFolder(gate, in: Repository.fixtures).path
            )
            .filter { $0.hasSuffix(".dump") }
            XCTAssertEqual(goldens.count, gate.fixtures.count, "\(gate.name): one golden dump per fixture store")
        }
    }
}
