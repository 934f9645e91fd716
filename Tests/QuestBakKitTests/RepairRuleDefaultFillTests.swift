import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class RepairRuleDefaultFillTests: XCTestCase {
    func testMissingRequiredValuesGetTheTargetsOrTheDefaultsSchemasDefault() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append(
            "Routine", 1, RuleDatasets.routine(["displayName": .null, "activeDays": .null, "isActive": .null, "updatedAt": .null]))
        dataset.append("Routine", 2, RuleDatasets.routine(["name": .string("evening"), "isActive": .null]))
        dataset.append("GameSession", 1, ["startedAt": .date(1), "isCalibration": .boolean(true)])
        // V1 knows activeDays' and xpEarned's defaults; V2 knows the others.
        let run = try RuleRun.apply(
            [DefaultFillRule()], to: dataset, in: try TemporaryTestDirectory(), defaultsSchema: TimeQuestSchemas.v2, now: 788_918_400.5)
        XCTAssertNil(run.failure)
        let routines = try run.records("Routine")
        XCTAssertEqual(routines[0]["displayName"], .string(""))
        XCTAssertEqual(routines[0]["activeDays"], .integerArray([]))
        XCTAssertEqual(routines.map { $0["isActive"] }, [.boolean(true), .boolean(true)])
        XCTAssertEqual(routines[0]["updatedAt"], .date(788_918_400.5), "Date.now is the context's now, not the clock")
        XCTAssertEqual(routines[1]["updatedAt"], .date(11.5))
        XCTAssertEqual(try run.values("GameSession", "xpEarned"), [1: .integer(0)])
        XCTAssertEqual(try run.values("GameSession", "completedAt"), [1: .null], "optional values stay nil")
        // Entities alphabetically, attributes in the schema's order, records by key.
        XCTAssertEqual(
            try run.entries(),
            [
                "repair default: GameSession _pk 1 xpEarned: null → 0",
                "repair default: Routine _pk 1 displayName: null → \"\"",
                "repair default: Routine _pk 1 activeDays: null → \(reportJSON(.integerArray([])))",
                "repair default: Routine _pk 1 isActive: null → true",
                "repair default: Routine _pk 2 isActive: null → true",
                "repair default: Routine _pk 1 updatedAt: null → \(reportJSON(.date(788_918_400.5)))",
            ])
    }

    func testAMissingValueWithoutAnyDefaultIsAnErrorNotAGuess() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v1)
        dataset.append("Routine", 1, RuleDatasets.routine(["displayName": .null]))
        let run = try RuleRun.apply([DefaultFillRule()], to: dataset, in: try TemporaryTestDirectory(), defaultsSchema: TimeQuestSchemas.v1)
        XCTAssertEqual(run.failure as? RepairError, .noDefault(entity: "Routine", property: "displayName"))
    }

    func testCloudIDsAreLeftToTheirOwnRule() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, RuleDatasets.routine())
        let run = try RuleRun.apply([DefaultFillRule()], to: dataset, in: try TemporaryTestDirectory())
        XCTAssertEqual(try run.values("Routine", "cloudID"), [1: .null])
        XCTAssertEqual(try run.entries(), [])
        XCTAssertFalse(
            DefaultFillRule().fields(
                of: ModelVersion(schema: TimeQuestSchemas.v2).entity(named: "Routine")!, in: ModelVersion(schema: TimeQuestSchemas.v2)
            ).contains("cloudID"))
    }

    func testItDeclaresTheRequiredAttributes() {
        let rule = DefaultFillRule()
        XCTAssertEqual(rule.effects, [RepairRuleEffect(.defaultFill, .changesField)])
        let v1 = TimeQuestSchemas.v1
        XCTAssertEqual(
            rule.fields(of: ModelVersion(schema: v1).entity(named: "GameSession")!, in: ModelVersion(schema: v1)),
            ["startedAt", "isCalibration", "xpEarned"])
    }
}
