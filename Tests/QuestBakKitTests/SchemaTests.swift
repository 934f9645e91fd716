import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class SchemaTests: XCTestCase {
    func testEntitiesAreNumberedAlphabetically() {
        XCTAssertEqual(
            TimeQuestSchemas.v1.entities.map(\.name), ["GameSession", "PlayerProfile", "Routine", "RoutineTask", "TaskEstimation"])
        XCTAssertEqual(TimeQuestSchemas.v2.entityNumber(of: "Routine"), 3)
        XCTAssertEqual(TimeQuestSchemas.v2.entityNumber(of: "TaskEstimation"), 5)
    }

    func testV2AddsCloudIDAndADefaultToEveryNonOptionalProperty() {
        for entity in TimeQuestSchemas.v2.entities {
            XCTAssertEqual(entity.attribute(named: "cloudID"), Attribute("cloudID", .string, default: .newUUIDString), entity.name)
            for attribute in entity.attributes where !attribute.isOptional {
                XCTAssertNotNil(attribute.defaultValue, "\(entity.name).\(attribute.name) has no V2 default")
            }
        }
        XCTAssertNil(TimeQuestSchemas.v1.entity(named: "Routine")?.attribute(named: "cloudID"))
        XCTAssertNil(TimeQuestSchemas.v1.entity(named: "TaskEstimation")?.attribute(named: "estimatedSeconds")?.defaultValue)
        XCTAssertEqual(
            TimeQuestSchemas.v2.entity(named: "TaskEstimation")?.attribute(named: "ratingRawValue")?.defaultValue,
            .value(.string("way_off")))
        XCTAssertEqual(TimeQuestSchemas.v2.entity(named: "Routine")?.attribute(named: "createdAt")?.defaultValue, .now)
        XCTAssertEqual(TimeQuestSchemas.v2.entity(named: "Routine")?.attribute(named: "isActive")?.defaultValue, .value(.boolean(true)))
    }

    func testV2ChangesNothingElse() {
        XCTAssertEqual(TimeQuestSchemas.v1.identities, TimeQuestSchemas.v2.identities)
        for (old, new) in zip(TimeQuestSchemas.v1.entities, TimeQuestSchemas.v2.entities) {
            XCTAssertEqual(old.relationships, new.relationships)
            let newWithoutCloudID = new.attributes.filter { $0.name != "cloudID" }
            XCTAssertEqual(old.attributes.map(\.name), newWithoutCloudID.map(\.name))
            XCTAssertEqual(old.attributes.map(\.kind), newWithoutCloudID.map(\.kind))
            XCTAssertEqual(old.attributes.map(\.isOptional), newWithoutCloudID.map(\.isOptional))
        }
    }

    func testTheLayoutFollowsCoreDataColumnOrder() throws {
        let routine = try ModelTables(model: CompiledModel(schema: TimeQuestSchemas.v2)).table(for: "Routine")
        XCTAssertEqual(
            routine?.createStatement,
            "CREATE TABLE ZROUTINE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZISACTIVE INTEGER, ZCREATEDAT TIMESTAMP, ZUPDATEDAT TIMESTAMP, ZCLOUDID VARCHAR, ZDISPLAYNAME VARCHAR, ZNAME VARCHAR, ZACTIVEDAYS BLOB )"
        )
        let task = try ModelTables(model: CompiledModel(schema: TimeQuestSchemas.v1)).table(for: "RoutineTask")
        XCTAssertEqual(task?.columns.map(\.name), ["ZORDERINDEX", "ZREFERENCEDURATIONSECONDS", "ZROUTINE", "ZDISPLAYNAME", "ZNAME"])
        XCTAssertEqual(task?.indexStatements, ["CREATE INDEX ZROUTINETASK_ZROUTINE_INDEX ON ZROUTINETASK (ZROUTINE)"])
        // Each column says which property it stores, in that order.
        let tables = try ModelTables(model: CompiledModel(schema: TimeQuestSchemas.v1))
        XCTAssertEqual(
            tables.propertyColumns(of: "RoutineTask").map(\.property),
            ["orderIndex", "referenceDurationSeconds", "routine", "displayName", "name"])
    }

    func testClashingColumnNamesGetANumericSuffix() throws {
        let entity = Entity(name: "Item", attributes: [Attribute("id", .string), Attribute("ID", .string)])
        let model = CompiledModel(schema: Schema(versionIdentifier: "1", entities: [entity]))
        XCTAssertEqual(try ModelTables(model: model).tables.first?.columns.map(\.name), ["ZID", "ZID1"])
    }
}

final class ModelVersionHashesTests: XCTestCase {
    /// Values printed by `Scripts/model-hashes.py`, a second, independent implementation of the
    /// scheme in the spec. A change here means the app would no longer recognise our stores.
    func testHashesArePinnedToTheIndependentImplementation() {
        let v1 = ModelVersionHashes(declaration: TimeQuestSchemas.v1)
        XCTAssertEqual(
            v1.entityHashes.mapValues { $0.base64EncodedString() },
            [
                "GameSession": "qei037UZa3VVzWFBZd4bPPvoBSH/Xzhz/gND7dGjqeA=",
                "PlayerProfile": "UzmjgyGIN10fG9VTNnAGbhsZaBFcwy5ZStOyURl3ASI=",
                "Routine": "m122CuoXMpizvcHFaOijGqXbGpTgYEuAApVT//KvfDo=",
                "RoutineTask": "IrNaP3PawdbTHfJsiZZuTNUWF9ZRjuXWqwTBMYenTY8=",
                "TaskEstimation": "BLbk9U4UjZPMaJaZ22GpsMKT8MJ9FN0fyxQUZYgQwvE=",
            ])
        XCTAssertEqual(v1.checksum, "5QlFFcEg+NhXs5k1pbSAoFSMiSKkrzhPVmesoQveuIo=")
        XCTAssertEqual(v1.digest, "1j3L0ZdkR+cVJyFgAUAHnm7UQwr8v8w48O/wzNKEiHRZs38dd/LXV9iWgYJeIt/6pZP5HhMmKs4b49yiOz/k1A==")

        let v2 = ModelVersionHashes(declaration: TimeQuestSchemas.v2)
        XCTAssertEqual(
            v2.entityHashes.mapValues { $0.base64EncodedString() },
            [
                "GameSession": "4saUzGqk3LNjWvRzBoaL4BQ4TvGsSCCNjA4s+hWwbao=",
                "PlayerProfile": "wSoFVPyrzQuThHd9MdkqR2qSGExMxNld7E71gPZtXdc=",
                "Routine": "4j3YGtQMamaqpRjQS/TFsdxoAAbqHGb2F7JA+N0recc=",
                "RoutineTask": "CjgElEr46rsDrk6E27zHUu/fe0LIqZF7l/n3NMawry0=",
                "TaskEstimation": "Jire66IuGIooDvw2rMUFrXHwbsUu8r5+DOEDXtA0m/E=",
            ])
        XCTAssertEqual(v2.checksum, "h5Ol2aG9104nGTiXHs+Ozk1qZNULS1lDHJysxEZ6UeQ=")
        XCTAssertEqual(v2.digest, "RqOzQRE7HyfUl9oaZ1vI7ZyJNypxAXPdN5Tn/Foa8jgdKInawDExv8VT+jbp+WSSnBTjn7Ru1z/a6/JsqaC9sw==")
    }

    func testDefaultsAndDeleteRulesDoNotEnterTheHash() {
        var schema = TimeQuestSchemas.v1
        schema.entities[2].attributes[0].defaultValue = .value(.string("changed"))
        schema.entities[2].relationships[0].deleteRule = .nullify
        XCTAssertEqual(ModelVersionHashes(declaration: schema), ModelVersionHashes(declaration: TimeQuestSchemas.v1))
    }

    func testOptionalityAndTypeDoEnterTheHash() {
        var optional = TimeQuestSchemas.v1
        optional.entities[2].attributes[0].isOptional = true
        XCTAssertNotEqual(
            ModelVersionHashes(declaration: optional).entityHashes["Routine"],
            ModelVersionHashes(declaration: TimeQuestSchemas.v1).entityHashes["Routine"])
        var retyped = TimeQuestSchemas.v1
        retyped.entities[2].attributes[0].kind = .binary
        XCTAssertNotEqual(ModelVersionHashes(declaration: retyped).checksum, ModelVersionHashes(declaration: TimeQuestSchemas.v1).checksum)
    }

    func testHashesIdentifyTheirSchema() {
        XCTAssertEqual(
            ModelVersion.matching(
                entityHashes: ModelVersion(schema: TimeQuestSchemas.v2).hashes.entityHashes, in: TimeQuestSchemas.versions)?
                .versionIdentifier, "2.0.0")
        XCTAssertEqual(
            ModelVersion.matching(
                entityHashes: ModelVersion(schema: TimeQuestSchemas.v1).hashes.entityHashes, in: TimeQuestSchemas.versions)?
                .versionIdentifier, "1.0.0")
    }
}
