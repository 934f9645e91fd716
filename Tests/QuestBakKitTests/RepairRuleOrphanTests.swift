import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class RepairRuleOrphanTests: XCTestCase {
    func orphans() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append("Routine", 1, RuleDatasets.routine())
        dataset.append(
            "RoutineTask", 1, ["name": .string("a"), "displayName": .string("A"), "orderIndex": .integer(0), "routine": .integer(1)])
        dataset.append(
            "RoutineTask", 2, ["name": .string("b"), "displayName": .string("B"), "orderIndex": .integer(1), "routine": .integer(99)])
        dataset.append("RoutineTask", 3, ["name": .string("c"), "displayName": .string("C"), "orderIndex": .integer(2)])
        dataset.append(
            "GameSession", 5, ["startedAt": .date(1), "isCalibration": .boolean(false), "xpEarned": .integer(0), "routine": .integer(42)])
        for (pk, session) in [(1, 5), (2, 7)] as [(Int64, Int64)] {
            dataset.append(
                "TaskEstimation", pk,
                [
                    "taskDisplayName": .string("t\(pk)"), "estimatedSeconds": .double(1), "actualSeconds": .double(1),
                    "differenceSeconds": .double(0),
                    "accuracyPercent": .double(100), "ratingRawValue": .string("spot_on"), "orderIndex": .integer(0),
                    "recordedAt": .date(2),
                    "session": .integer(session),
                ])
        }
        return dataset
    }

    func testARelationshipToAMissingRecordBecomesNilAndTheRecordStays() throws {
        let run = try RuleRun.apply([OrphanRule()], to: orphans(), in: try TemporaryTestDirectory())
        XCTAssertNil(run.failure)
        XCTAssertEqual(try run.values("RoutineTask", "routine"), [1: .integer(1), 2: .null, 3: .null])
        XCTAssertEqual(try run.values("GameSession", "routine"), [5: .null])
        // The estimation's session (5) still exists: the rule does not cascade.
        XCTAssertEqual(try run.values("TaskEstimation", "session"), [1: .integer(5), 2: .null])
        XCTAssertEqual(
            try run.entries(),
            [
                "repair orphan: GameSession _pk 5 routine: 42 → null",
                "repair orphan: RoutineTask _pk 2 routine: 99 → null",
                "repair orphan: TaskEstimation _pk 2 session: 7 → null",
            ])
        XCTAssertEqual(try run.log.keys(rule: .orphan).count, 3)
    }

    func testAConsistentStoreIsLeftAloneAndNothingIsLogged() throws {
        var dataset = orphans()
        dataset.records["RoutineTask"] = dataset.records["RoutineTask"]?.filter { $0.primaryKey != 2 }
        dataset.records["GameSession"] = dataset.records["GameSession"].map {
            $0.map {
                var record = $0
                record["routine"] = .integer(1)
                return record
            }
        }
        dataset.records["TaskEstimation"] = dataset.records["TaskEstimation"]?.filter { $0.primaryKey == 1 }
        let run = try RuleRun.apply([OrphanRule()], to: dataset, in: try TemporaryTestDirectory())
        XCTAssertEqual(try run.entries(), [])
        XCTAssertEqual(try run.values("GameSession", "routine"), [5: .integer(1)])
    }

    func testItDeclaresTheToOneRelationshipsItMayClear() {
        let rule = OrphanRule()
        XCTAssertEqual(rule.effects, [RepairRuleEffect(.orphan, .changesField)])
        let schema = TimeQuestSchemas.v2
        XCTAssertEqual(
            rule.fields(of: ModelVersion(schema: schema).entity(named: "RoutineTask")!, in: ModelVersion(schema: schema)), ["routine"])
        XCTAssertEqual(
            rule.fields(of: ModelVersion(schema: schema).entity(named: "GameSession")!, in: ModelVersion(schema: schema)), ["routine"])
        XCTAssertEqual(rule.fields(of: ModelVersion(schema: schema).entity(named: "Routine")!, in: ModelVersion(schema: schema)), [])
    }
}
