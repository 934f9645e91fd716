import Foundation
import QuestBakTestSupport
import XCTest

@testable import QuestBakFixtures
@testable import QuestBakKit

final class RepairRuleDuplicateTests: XCTestCase {
    typealias D = RuleDatasets

    /// Three routines of one natural key: pk 1 without a cloudID, pk 2 with A (joins 1, which
    /// takes A), pk 3 with B (CloudKit knows it as another record: kept). Two more with a missing
    /// key part, never merged. Task 10 points at the dropped routine and, once re-pointed,
    /// duplicates task 11.
    func duplicates() -> Dataset {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("Routine", 1, D.routine())
        dataset.append("Routine", 2, D.routine(["cloudID": .string(D.cloudA), "displayName": .string("Copy")]))
        dataset.append("Routine", 3, D.routine(["cloudID": .string(D.cloudB)]))
        dataset.append("Routine", 4, D.routine(["name": .null]))
        dataset.append("Routine", 5, D.routine(["name": .null]))
        dataset.append(
            "RoutineTask", 10,
            ["name": .string("brush"), "displayName": .string("Brush"), "orderIndex": .integer(0), "routine": .integer(2)])
        dataset.append(
            "RoutineTask", 11,
            ["name": .string("brush"), "displayName": .string("Brush 2"), "orderIndex": .integer(0), "routine": .integer(1)])
        dataset.append(
            "RoutineTask", 12,
            ["name": .string("floss"), "displayName": .string("Floss"), "orderIndex": .integer(1), "routine": .integer(3)])
        return dataset
    }

    /// The identity rule: one natural key is one record, whatever cloudIDs its copies got; the
    /// keeper keeps the first cloudID, and each dropped copy's is reported with it.
    func testOneNaturalKeyIsOneRecordWhateverItsCloudIDs() throws {
        let run = try RuleRun.apply([DuplicateRule()], to: duplicates(), in: try TemporaryTestDirectory())
        XCTAssertNil(run.failure)
        XCTAssertEqual(try run.records("Routine").map(\.primaryKey), [1, 4, 5])
        XCTAssertEqual(try run.values("Routine", "cloudID")[1], .string(D.cloudA))
        XCTAssertEqual(try run.values("RoutineTask", "routine"), [10: .integer(1), 12: .integer(1)])
        let entries = try run.entries()
        XCTAssertTrue(entries.contains("repair dedup: Routine _pk 3 (\(D.cloudB)) dropped as a duplicate of _pk 1"), "\(entries)")
    }

    /// `--keep-distinct-ids`: records whose well-formed cloudIDs differ stay two (the behaviour
    /// before the identity rule).
    func testDuplicatesCollapseIntoTheLowestKeyWithChildrenRepointedParentsFirst() throws {
        let run = try RuleRun.apply([DuplicateRule()], to: duplicates(), in: try TemporaryTestDirectory(), keepDistinctIDs: true)
        XCTAssertNil(run.failure)
        XCTAssertEqual(try run.records("Routine").map(\.primaryKey), [1, 3, 4, 5])
        XCTAssertEqual(try run.values("Routine", "cloudID"), [1: .string(D.cloudA), 3: .string(D.cloudB), 4: .null, 5: .null])
        XCTAssertEqual(try run.values("Routine", "displayName")[1], .string("Morning"), "the keeper's values stay")
        XCTAssertEqual(try run.values("RoutineTask", "routine"), [10: .integer(1), 12: .integer(3)])
        XCTAssertEqual(
            try run.entries(),
            [
                "repair dedup: Routine _pk 2 (\(D.cloudA)) dropped as a duplicate of _pk 1",
                "repair repoint: RoutineTask _pk 10 routine: 2 → 1",
                "repair merge: Routine _pk 1 (\(D.cloudA)) cloudID: null → \(reportJSON(.string(D.cloudA)))",
                "repair dedup: RoutineTask _pk 11 dropped as a duplicate of _pk 10",
            ])
    }

    func testADroppedRecordIsReportedInFull() throws {
        let run = try RuleRun.apply([DuplicateRule()], to: duplicates(), in: try TemporaryTestDirectory())
        let dropped = try XCTUnwrap(run.entryObjects().first)
        XCTAssertEqual(dropped["rule"] as? String, "dedup")
        XCTAssertEqual(dropped["new"] as? Int, 1)
        let old = try XCTUnwrap(dropped["old"] as? [String: Any])
        XCTAssertEqual(old["_pk"] as? Int, 2)
        XCTAssertEqual(old["displayName"] as? String, "Copy")
        XCTAssertEqual(old["cloudID"] as? String, D.cloudA)
        XCTAssertEqual(Set(old.keys), Set(TimeQuestSchemas.v2.entity(named: "Routine")!.attributes.map(\.name) + ["_pk"]))
    }

    func testSingletonsAndEntitiesWithoutAKeyAreNotThisRulesBusiness() throws {
        var dataset = Dataset(schema: TimeQuestSchemas.v2)
        dataset.append("PlayerProfile", 1, ["totalXP": .integer(1)])
        dataset.append("PlayerProfile", 2, ["totalXP": .integer(2)])
        let run = try RuleRun.apply([DuplicateRule()], to: dataset, in: try TemporaryTestDirectory())
        XCTAssertEqual(try run.records("PlayerProfile").count, 2)
        XCTAssertEqual(try run.entries(), [])
    }

    func testItDeclaresRemovalsRepointsAndTheCarriedCloudID() {
        let rule = DuplicateRule()
        XCTAssertEqual(
            Set(rule.effects),
            [
                RepairRuleEffect(.dedup, .removesRecord), RepairRuleEffect(.repoint, .repointsRelationship),
                RepairRuleEffect(.merge, .changesField),
            ])
        let v2 = TimeQuestSchemas.v2
        XCTAssertEqual(
            rule.fields(of: ModelVersion(schema: v2).entity(named: "RoutineTask")!, in: ModelVersion(schema: v2)), ["routine", "cloudID"])
        XCTAssertEqual(rule.fields(of: ModelVersion(schema: v2).entity(named: "PlayerProfile")!, in: ModelVersion(schema: v2)), [])
        XCTAssertEqual(
            rule.fields(
                of: ModelVersion(schema: TimeQuestSchemas.v1).entity(named: "Routine")!, in: ModelVersion(schema: TimeQuestSchemas.v1)), [])
    }
}
