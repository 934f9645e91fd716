import CoreDataStore
import QuestBakArchive

/// The TimeQuest app's profile, transcribed from `shared/spec/timequest-schema.md`: its two model
/// versions as the models say them, and what no model says (natural keys, the singleton
/// `PlayerProfile` and how its copies merge, the element type of `Routine.activeDays`).
///
/// V2 is derived from V1 by the same two rules the app's developers applied (add `cloudID`,
/// give every non-optional property a default), so the relation between the versions is stated
/// once instead of being kept in sync by hand across ten model definitions.
extension AppProfile {
    package static let timeQuest = AppProfile(
        name: "TimeQuest", models: [TimeQuestModels.v1Model, TimeQuestModels.v2Model],
        identities: [
            "Routine": Identity(naturalKey: ["name", "createdAt"]),
            "RoutineTask": Identity(naturalKey: ["routine", "name", "orderIndex"]),
            "GameSession": Identity(naturalKey: ["routine", "startedAt"]),
            "TaskEstimation": Identity(naturalKey: ["session", "taskDisplayName", "recordedAt"]),
            "PlayerProfile": Identity(
                singletonCloudID: TimeQuestSchemas.playerProfileCloudID,
                merge: ["totalXP": .maximum, "currentStreak": .maximum, "lastPlayedDate": .maximum, "createdAt": .minimum]),
        ],
        attributeKinds: ["Routine": ["activeDays": .integerArray]])
}

/// TimeQuest's versions, as its profile gives them (natural keys and kinds applied): compiled,
/// for the engine, and as declared, for fixture tooling and `questbak schema`.
package enum TimeQuestSchemas {
    public static let playerProfileCloudID = "singleton-player-profile"

    /// Every TimeQuest version, oldest first, compiled (`AppProfile.versions`).
    public static var versions: [ModelVersion] { AppProfile.timeQuest.versions }
    public static var newest: ModelVersion { versions[versions.count - 1] }

    public static func version(_ identifier: String) -> ModelVersion? {
        AppProfile.timeQuest.version(identifier)
    }

    /// The versions as declared (`AppProfile.declarations`), oldest first: what fixtures are
    /// written from and `questbak schema` prints.
    public static var declarations: [Schema] { AppProfile.timeQuest.declarations }
    public static let v1 = AppProfile.timeQuest.declarations[0]
    public static let v2 = AppProfile.timeQuest.declarations[1]

    public static func declaration(_ identifier: String) -> Schema? {
        AppProfile.timeQuest.declaration(identifier)
    }
}

/// The models as TimeQuest's `VersionedSchema`s declare them.
private enum TimeQuestModels {
    static let v1Model = Schema(
        versionIdentifier: "1.0.0",
        entities: [
            Entity(
                name: "Routine",
                attributes: [
                    Attribute("name", .string),
                    Attribute("displayName", .string),
                    Attribute("activeDays", .transformable, default: .value(.integerArray([]))),
                    Attribute("isActive", .boolean),
                    Attribute("createdAt", .date),
                    Attribute("updatedAt", .date),
                ],
                relationships: [
                    Relationship("tasks", to: "RoutineTask", inverse: "routine", toMany: true, deleteRule: .cascade),
                    Relationship("sessions", to: "GameSession", inverse: "routine", toMany: true, deleteRule: .cascade),
                ]
            ),
            Entity(
                name: "RoutineTask",
                attributes: [
                    Attribute("name", .string),
                    Attribute("displayName", .string),
                    Attribute("referenceDurationSeconds", .integer, optional: true),
                    Attribute("orderIndex", .integer),
                ],
                relationships: [
                    Relationship("routine", to: "Routine", inverse: "tasks", toMany: false)
                ]
            ),
            Entity(
                name: "GameSession",
                attributes: [
                    Attribute("startedAt", .date),
                    Attribute("completedAt", .date, optional: true),
                    Attribute("isCalibration", .boolean),
                    Attribute("xpEarned", .integer, default: .value(.integer(0))),
                ],
                relationships: [
                    Relationship("routine", to: "Routine", inverse: "sessions", toMany: false),
                    Relationship("estimations", to: "TaskEstimation", inverse: "session", toMany: true, deleteRule: .cascade),
                ]
            ),
            Entity(
                name: "TaskEstimation",
                attributes: [
                    Attribute("taskDisplayName", .string),
                    Attribute("estimatedSeconds", .double),
                    Attribute("actualSeconds", .double),
                    Attribute("differenceSeconds", .double),
                    Attribute("accuracyPercent", .double),
                    Attribute("ratingRawValue", .string),
                    Attribute("orderIndex", .integer),
                    Attribute("recordedAt", .date),
                ],
                relationships: [
                    Relationship("session", to: "GameSession", inverse: "estimations", toMany: false)
                ]
            ),
            Entity(
                name: "PlayerProfile",
                attributes: [
                    Attribute("totalXP", .integer, default: .value(.integer(0))),
                    Attribute("currentStreak", .integer, default: .value(.integer(0))),
                    Attribute("lastPlayedDate", .date, optional: true),
                    Attribute("notificationsEnabled", .boolean, default: .value(.boolean(true))),
                    Attribute("notificationHour", .integer, default: .value(.integer(7))),
                    Attribute("notificationMinute", .integer, default: .value(.integer(30))),
                    Attribute("soundEnabled", .boolean, default: .value(.boolean(true))),
                    Attribute("createdAt", .date, default: .now),
                ]
            ),
        ])

    /// V1's model plus `cloudID` on every model and a property-level default on every non-optional
    /// property (the CloudKit requirements of seed 001).
    static let v2Model: Schema = {
        let cloudKitDefaults: [String: [String: Value]] = [
            "Routine": ["name": .string(""), "displayName": .string(""), "isActive": .boolean(true)],
            "RoutineTask": ["name": .string(""), "displayName": .string(""), "orderIndex": .integer(0)],
            "GameSession": ["isCalibration": .boolean(false)],
            "TaskEstimation": [
                "taskDisplayName": .string(""), "estimatedSeconds": .double(0), "actualSeconds": .double(0),
                "differenceSeconds": .double(0), "accuracyPercent": .double(0), "ratingRawValue": .string("way_off"),
                "orderIndex": .integer(0),
            ],
        ]
        return Schema(
            versionIdentifier: "2.0.0",
            entities: v1Model.entities.map { entity in
                var entity = entity
                entity.attributes = entity.attributes.map { attribute in
                    var attribute = attribute
                    if !attribute.isOptional && attribute.defaultValue == nil {
                        if let value = cloudKitDefaults[entity.name]?[attribute.name] {
                            attribute.defaultValue = .value(value)
                        } else if attribute.kind == .date {
                            attribute.defaultValue = .now
                        }
                    }
                    return attribute
                }
                entity.attributes.insert(Attribute(CompiledEntity.cloudIDAttribute, .string, default: .newUUIDString), at: 0)
                return entity
            })
    }()

}
