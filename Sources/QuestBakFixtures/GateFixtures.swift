import Foundation
import QuestBakKit

/// The migration gate for apps other than TimeQuest (seeds 002 and 004), as an app team sets it
/// up: stores of the old model in `Fixtures/Gates/<App>/fixtures/<name>/default.store`, the empty
/// store of the new build in `Fixtures/Gates/<App>/next/default.store`, and the golden dumps
/// `verify-migration --record` writes beside the fixtures. `make test` runs
/// `verify-migration --fixtures Fixtures/Gates/<App>/fixtures --to Fixtures/Gates/<App>/next/default.store`.
package enum GateFixtures {
    package struct Gate: Sendable {
        package var name: String
        package var fixtures: [(name: String, store: ModelStore)]
        package var next: ModelStore
    }

    package static let folderName = "Gates"
    package static var all: [Gate] { [bennieGame, ritualist] }

    package static func fixturesFolder(_ gate: Gate, in directory: URL) -> URL {
        directory.appendingPathComponent(folderName).appendingPathComponent(gate.name).appendingPathComponent("fixtures")
    }

    package static func nextStore(_ gate: Gate, in directory: URL) -> URL {
        directory.appendingPathComponent(folderName).appendingPathComponent(gate.name).appendingPathComponent("next/default.store")
    }

    /// Writes every gate's stores (never its golden dumps: those are recorded on purpose).
    package static func writeAll(to directory: URL) throws {
        for gate in all {
            for (name, store) in gate.fixtures {
                let folder = fixturesFolder(gate, in: directory).appendingPathComponent(name)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try ModelStoreWriter.write(store, to: folder.appendingPathComponent("default.store"))
            }
            let next = nextStore(gate, in: directory)
            try FileManager.default.createDirectory(at: next.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ModelStoreWriter.write(gate.next, to: next)
        }
    }

    typealias Code = CompiledAttribute.TypeCode

    // MARK: BennieGame 1.0 → 1.2 (seed 002, "v1.2 (Future - Cloud Sync)")

    /// Sync tokens on players, the last sync date in the settings, and a new entity for cloud
    /// backup metadata, which sorts between existing ones and so renumbers those after it.
    static var bennieGameNextModel: CompiledModel {
        var model = AnyAppFixtures.bennieGameModel
        model.versionIdentifiers = ["1.2.0"]
        for index in model.entities.indices {
            switch model.entities[index].name {
            case "PlayerData": model.entities[index].attributes.append(AnyAppFixtures.attribute("syncToken", Code.uuid, optional: true))
            case "AppSettings":
                model.entities[index].attributes.append(AnyAppFixtures.attribute("lastSyncDate", Code.date, optional: true))
            default: break
            }
            model.entities[index].attributes.sort { $0.name < $1.name }
        }
        model.entities.append(
            AnyAppFixtures.entity(
                "CloudBackup",
                [
                    AnyAppFixtures.attribute("needsUpload", Code.boolean, default: .boolean(true)),
                    AnyAppFixtures.attribute("recordName", Code.string, optional: true),
                ]))
        model.entities.sort { $0.name < $1.name }
        return model
    }

    static var bennieGame: Gate {
        var next = ModelStore(model: bennieGameNextModel, uuid: "B3E71E00-0A1C-4D2B-8E5F-6A7B8C9D0120", rows: [])
        next.frameworkVersion = 1526
        return Gate(name: "BennieGame", fixtures: [("v1.0-alexander-oliver", AnyAppFixtures.bennieGame.store)], next: next)
    }

    // MARK: Ritualist 1 → 2 (seed 004: records gain `schemaVersion`; missing means "v1")

    static func ritualistModel(next: Bool) -> CompiledModel {
        var profile: [CompiledAttribute] = [
            AnyAppFixtures.attribute("appearance", Code.int16, default: .integer(0)),
            AnyAppFixtures.attribute("avatarImageData", Code.binary, optional: true),
            AnyAppFixtures.attribute("createdAt", Code.date, default: .date(secondsSince2001: 788_918_400)),
            AnyAppFixtures.attribute("homeTimezone", Code.string, optional: true),
            AnyAppFixtures.attribute("id", Code.uuid, default: .uuid(AnyAppFixtures.uuidBytes("ritualist profile id default"))),
            AnyAppFixtures.attribute("name", Code.string, default: .string("")),
            AnyAppFixtures.attribute("subscriptionPlan", Code.string, default: .string("free")),
            AnyAppFixtures.attribute("updatedAt", Code.date, default: .date(secondsSince2001: 788_918_400)),
        ]
        if next {
            // Seed 004: a record without a version is "v1"; a later field is optional, so old readers keep it.
            profile.append(AnyAppFixtures.attribute("schemaVersion", Code.string, default: .string("v1")))
            profile.append(AnyAppFixtures.attribute("favoriteColor", Code.string, optional: true))
        }
        return CompiledModel(
            versionIdentifiers: [next ? "2.0.0" : "1.0.0"],
            entities: [
                AnyAppFixtures.entity(
                    "Habit",
                    [
                        AnyAppFixtures.attribute("emoji", Code.string, optional: true),
                        AnyAppFixtures.attribute("isActive", Code.boolean, default: .boolean(true)),
                        AnyAppFixtures.attribute("name", Code.string, default: .string("")),
                    ],
                    [AnyAppFixtures.toMany("logs", "HabitLog", inverse: "habit", deleteRule: 2)]),
                AnyAppFixtures.entity(
                    "HabitLog",
                    [
                        AnyAppFixtures.attribute("date", Code.date, default: .date(secondsSince2001: 788_918_400)),
                        AnyAppFixtures.attribute("value", Code.double, optional: true),
                    ],
                    [AnyAppFixtures.toOne("habit", "Habit", inverse: "logs")]),
                AnyAppFixtures.entity("UserProfile", profile.sorted { $0.name < $1.name }),
            ])
    }

    static var ritualist: Gate {
        let day = 86_400.0
        let start = 816_220_800.0  // 2026-11-13T00:00:00Z
        var rows: [ModelRow] = [
            ModelRow(
                "UserProfile", 1,
                [
                    "appearance": .integer(2), "avatarImageData": .blob(Data([0x89, 0x50, 0x4E, 0x47])),
                    "createdAt": .real(start - 30 * day), "homeTimezone": .text("Europe/Berlin"),
                    "id": .blob(AnyAppFixtures.uuidBytes("ritualist profile John")), "name": .text("John"),
                    "subscriptionPlan": .text("annual"), "updatedAt": .real(start),
                ]),
            ModelRow("Habit", 1, ["emoji": .text("🧘"), "isActive": .integer(1), "name": .text("Meditate")]),
            ModelRow("Habit", 2, ["emoji": .null, "isActive": .integer(0), "name": .text("Run 5 km")]),
        ]
        for index in 0..<6 {
            rows.append(
                ModelRow(
                    "HabitLog", Int64(index + 1),
                    [
                        "date": .real(start + Double(index) * day), "value": index % 3 == 0 ? .null : .real(Double(index) * 1.5),
                        "habit": .integer(index < 4 ? 1 : 2),
                    ]))
        }
        var old = ModelStore(model: ritualistModel(next: false), uuid: "9E1C0A55-7C2B-4F0E-8B9A-00000000A004", rows: rows)
        old.frameworkVersion = 1526
        var next = ModelStore(model: ritualistModel(next: true), uuid: "9E1C0A55-7C2B-4F0E-8B9A-00000000A005", rows: [])
        next.frameworkVersion = 1526
        return Gate(name: "Ritualist", fixtures: [("v1-john", old)], next: next)
    }
}
