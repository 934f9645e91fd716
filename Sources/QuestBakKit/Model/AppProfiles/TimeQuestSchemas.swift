/// The TimeQuest app's schemas, transcribed from `shared/spec/timequest-schema.md`.
///
/// V2 is derived from V1 by the same two rules the app's developers applied (add `cloudID`,
/// give every non-optional property a default), so the relation between the versions is stated
/// once instead of being kept in sync by hand across ten model definitions.
package enum TimeQuestSchemas {
    public static let playerProfileCloudID = "singleton-player-profile"

    public static let v1 = Schema(
        versionIdentifier: "1.0.0",
        entities: [
            Entity(
                name: "Routine",
                attributes: [
                    Attribute("name", .string),
                    Attribute("displayName", .string),
                    Attribute("activeDays", .integerArray, default: .value(.integerArray([]))),
                    Attribute("isActive", .boolean),
                    Attribute("createdAt", .date),
                    Attribute("updatedAt", .date),
                ],
                relationships: [
                    Relationship("tasks", to: "RoutineTask", inverse: "routine", toMany: true, deleteRule: .cascade),
                    Relationship("sessions", to: "GameSession", inverse: "routine", toMany: true, deleteRule: .cascade),
                ],
                identity: Identity(naturalKey: ["name", "createdAt"])
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
                ],
                identity: Identity(naturalKey: ["routine", "name", "orderIndex"])
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
                ],
                identity: Identity(naturalKey: ["routine", "startedAt"])
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
                ],
                identity: Identity(naturalKey: ["session", "taskDisplayName", "recordedAt"])
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
                ],
                identity: Identity(
                    singletonCloudID: playerProfileCloudID,
                    merge: ["totalXP": .maximum, "currentStreak": .maximum, "lastPlayedDate": .maximum, "createdAt": .minimum]
                )
            ),
        ])

    /// V1 plus `cloudID` on every model and a property-level default on every non-optional
    /// property (the CloudKit requirements of seed 001).
    public static let v2: Schema = {
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
            entities: v1.entities.map { entity in
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
                entity.attributes.insert(Attribute(Entity.cloudIDAttribute, .string, default: .newUUIDString), at: 0)
                return entity
            })
    }()

    /// Every TimeQuest schema, oldest first.
    public static let all: [Schema] = [v1, v2]
    public static var newest: Schema { all[all.count - 1] }

    public static func schema(forVersion identifier: String) -> Schema? {
        all.first { $0.versionIdentifier == identifier }
    }
}
