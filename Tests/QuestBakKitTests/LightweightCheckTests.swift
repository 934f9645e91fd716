import Foundation
import XCTest

@testable import QuestBakKit

/// `LightweightCheck`: every kind of change Core Data cannot migrate without custom code is named,
/// one sentence per offending property, and lightweight changes pass.
final class LightweightCheckTests: XCTestCase {
    let v2 = TimeQuestSchemas.v2

    /// V2 with `edit` applied to the entity `name`.
    func next(_ name: String, _ edit: (inout Entity) -> Void) -> Schema {
        Schema(
            versionIdentifier: "3.0.0",
            entities: v2.entities.map { entity in
                var entity = entity
                if entity.name == name { edit(&entity) }
                return entity
            })
    }

    func problems(_ new: Schema) -> [String] { LightweightCheck.problems(from: ModelVersion(schema: v2), to: ModelVersion(schema: new)) }

    /// As many problems as expected, each starting with the expected sentence (a removal may add
    /// how to declare the rename in a schema file).
    func assertProblems(_ new: Schema, start expected: [String], file: StaticString = #filePath, line: UInt = #line) {
        let found = problems(new)
        XCTAssertEqual(found.count, expected.count, "\(found)", file: file, line: line)
        for (sentence, start) in zip(found, expected) {
            XCTAssertTrue(sentence.hasPrefix(start), "\(sentence) does not start with \(start)", file: file, line: line)
        }
    }

    func testTheShippedVersionsAndAdditiveChangesAreLightweight() {
        XCTAssertEqual(LightweightCheck.problems(from: ModelVersion(schema: TimeQuestSchemas.v1), to: ModelVersion(schema: v2)), [])
        XCTAssertEqual(LightweightCheck.problems(from: ModelVersion(schema: v2), to: ModelVersion(schema: v2)), [])
        let additive = next("Routine") { entity in
            entity.attributes.append(Attribute("notes", .string, optional: true))
            entity.attributes.append(Attribute("level", .integer, default: .value(.integer(1))))
            entity.attributes = entity.attributes.map { attribute in
                var attribute = attribute
                if attribute.name == "displayName" { attribute.isOptional = true }  // required → optional is fine
                return attribute
            }
        }
        let withEntity = Schema(
            versionIdentifier: "3.0.0", entities: additive.entities + [Entity(name: "Badge", attributes: [Attribute("title", .string)])])
        XCTAssertEqual(problems(withEntity), [])
    }

    func testARenameWithOriginalNameIsLightweightAndWithoutItIsARemoval() {
        let renamed = next("Routine") { entity in
            entity.attributes = entity.attributes.map { attribute in
                guard attribute.name == "displayName" else { return attribute }
                return Attribute("title", .string, default: .value(.string("")), originalName: "displayName")
            }
        }
        XCTAssertEqual(problems(renamed), [])
        let bare = next("Routine") { entity in
            entity.attributes = entity.attributes.map { attribute in
                attribute.name == "displayName" ? Attribute("title", .string, default: .value(.string(""))) : attribute
            }
        }
        assertProblems(bare, start: [#"Routine.displayName: removed, or renamed without @Attribute(originalName: "displayName")"#])
    }

    func testANameTakenByARenameIsNotItsOwnSuccessor() {
        // `name` becomes `title`, and a new `name` appears: the old values follow the rename.
        let swapped = next("Routine") { entity in
            entity.attributes = entity.attributes.map { attribute in
                guard attribute.name == "name" else { return attribute }
                return Attribute("title", .integer, default: .value(.integer(0)), originalName: "name")
            }
            entity.attributes.append(Attribute("name", .string, optional: true))
        }
        XCTAssertEqual(problems(swapped), ["Routine.title: type changes from string to integer"])
    }

    func testARemovedEntityAndARemovedAttributeAreNamed() {
        let withoutProfile = Schema(versionIdentifier: "3.0.0", entities: v2.entities.filter { $0.name != "PlayerProfile" })
        XCTAssertEqual(problems(withoutProfile), ["PlayerProfile: entity removed (a lightweight migration cannot delete an entity's data)"])
        let withoutSound = next("PlayerProfile") { $0.attributes.removeAll { $0.name == "soundEnabled" } }
        assertProblems(
            withoutSound, start: [#"PlayerProfile.soundEnabled: removed, or renamed without @Attribute(originalName: "soundEnabled")"#])
    }

    func testATypeChangeIsNamed() {
        let changed = next("GameSession") { entity in
            entity.attributes = entity.attributes.map { attribute in
                var attribute = attribute
                if attribute.name == "xpEarned" { attribute.kind = .double }
                return attribute
            }
        }
        XCTAssertEqual(problems(changed), ["GameSession.xpEarned: type changes from integer to double"])
    }

    func testBecomingRequiredNeedsADefault() {
        func required(default value: DefaultValue?) -> Schema {
            next("RoutineTask") { entity in
                entity.attributes = entity.attributes.map { attribute in
                    var attribute = attribute
                    if attribute.name == "referenceDurationSeconds" {
                        attribute.isOptional = false
                        attribute.defaultValue = value
                    }
                    return attribute
                }
            }
        }
        XCTAssertEqual(
            problems(required(default: nil)),
            [
                "RoutineTask.referenceDurationSeconds: becomes required without a default, so existing nil values have nothing to become"
            ])
        XCTAssertEqual(problems(required(default: .value(.integer(60)))), [])
    }

    func testANewRequiredAttributeNeedsADefault() {
        let added = next("TaskEstimation") { $0.attributes.append(Attribute("confidence", .double)) }
        XCTAssertEqual(problems(added), ["TaskEstimation.confidence: new required attribute without a default value"])
    }

    func testRemovedAndChangedRelationshipsAreNamed() {
        let removed = next("RoutineTask") { $0.relationships = [] }
        XCTAssertEqual(problems(removed), ["RoutineTask.routine: relationship removed"])
        let toMany = next("GameSession") { entity in
            entity.relationships = entity.relationships.map { relationship in
                relationship.name == "routine" ? Relationship("routine", to: "Routine", inverse: "sessions", toMany: true) : relationship
            }
        }
        XCTAssertEqual(problems(toMany), ["GameSession.routine: relationship changes from to-one Routine to to-many Routine"])
        let elsewhere = next("TaskEstimation") { entity in
            entity.relationships = entity.relationships.map { relationship in
                relationship.name == "session" ? Relationship("session", to: "Routine", inverse: nil, toMany: false) : relationship
            }
        }
        XCTAssertEqual(problems(elsewhere), ["TaskEstimation.session: relationship changes from to-one GameSession to to-one Routine"])
    }

    func testEveryProblemIsReportedNotJustTheFirst() {
        let many = next("Routine") { entity in
            entity.attributes.removeAll { $0.name == "isActive" }
            entity.attributes.append(Attribute("level", .integer))
            entity.relationships.removeAll { $0.name == "tasks" }
        }
        assertProblems(
            many,
            start: [
                #"Routine.isActive: removed, or renamed without @Attribute(originalName: "isActive")"#,
                "Routine.level: new required attribute without a default value",
                "Routine.tasks: relationship removed",
            ])
    }
}
