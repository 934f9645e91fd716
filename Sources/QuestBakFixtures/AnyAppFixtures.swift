import Crypto
import Foundation
import QuestBakKit

/// Fixture stores of apps other than TimeQuest, in `Fixtures/AnyApp/`: each a real SQLite file in
/// Core Data's layout carrying its own compiled model in `Z_MODELCACHE`, written by
/// `ModelStoreWriter` from a `CompiledModel` and rows. Deterministic, like `FixtureGenerator`.
package enum AnyAppFixtures {
    package struct Fixture: Sendable {
        package var name: String
        /// One line for `Fixtures/AnyApp/README.md`.
        package var summary: String
        package var store: ModelStore
    }

    package static let folderName = "AnyApp"
    package static let storeFileName = "default.store"

    package static var all: [Fixture] { [kitchenSink, bennieGame] }

    /// Writes every fixture into `directory/AnyApp/<name>/default.store` (replacing the store, its
    /// sidecars and its external data) and the index `directory/AnyApp/README.md`.
    package static func writeAll(to directory: URL) throws {
        let root = directory.appendingPathComponent(folderName)
        for fixture in all {
            let folder = root.appendingPathComponent(fixture.name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try ModelStoreWriter.write(fixture.store, to: folder.appendingPathComponent(storeFileName))
        }
        try Data(readme.utf8).write(to: root.appendingPathComponent("README.md"))
    }

    static var readme: String {
        var text = """
            # Stores of other apps

            Generated with the TimeQuest fixtures by `make fixtures` (`swift run questbak-fixtures Fixtures`)
            from `Sources/QuestBakFixtures/AnyAppFixtures.swift`: each model is a `CompiledModel`, and
            `ModelStoreWriter` derives the tables, indexes, bookkeeping rows, metadata hashes and
            `Z_MODELCACHE` from it (`ModelTables` holds the model-to-tables rules). Deterministic,
            so regenerating gives identical bytes. `verify-migration` looks one folder deep and so
            never reaches these stores: they are not TimeQuest stores.

            | fixture | contents |
            |---|---|

            """
        for fixture in all { text += "| `\(fixture.name)/` | \(fixture.summary) |\n" }
        text += """

            Inferred where the spec says nothing (a real store may differ):
            - Sub-entities: a sub-entity's columns share its root's table; `Z_MAX` is kept on the root's
              `Z_PRIMARYKEY` row (keys are unique per table) and is 0 on its sub-entities' rows.
              kitchen-sink's Liquid and Solid list only their own properties in the cache, their
              hashes computed so; Core Data lists the inherited ones too, as
              `_NSPropertyDescriptionProxy` objects, as the store shapes of
              `StoreShapes+ModelCaches.swift` do (docs/model-cache.md).
            - Hidden inverse columns (`Z<n><REL>`) sit with the foreign keys, after the to-ones; join
              tables are created after the entity tables, their indexes after the entity indexes.
            - Composite elements are ordered with the other columns by element name; a name clash gives
              the later column in that order the suffix (`ZNAME`, `ZNAME1`, `ZNAME2`).
            - A one-to-one keeps a foreign key on both sides.
            - Unique and fetch indexes keep the entity and property names' case
              (`Z_Recipe_UNIQUE_code`, `Z_Recipe_SwiftDataIndexOnBinarycreatedAt`).
            - External storage: the column holds 0x01 followed by the bytes when the value is inline, or
              0x02 followed by a file name (a UUID in ASCII) when the value is the file
              `.default_SUPPORT/_EXTERNAL_DATA/<UUID>` beside the store. kitchen-sink's `photo` is
              archived without the external-storage flag (`NSFlagsKey` 0), a plain Binary in its model
              and hash; a flagged attribute (`NSFlagsKey` 4) hashes one byte more (docs/model-cache.md).

            """
        return text
    }

    // MARK: Model building

    typealias Code = CompiledAttribute.TypeCode

    /// The value classes SwiftData archives for each attribute type.
    static let valueClasses: [Int: String] = [
        Code.int16: "NSNumber", Code.int32: "NSNumber", Code.int64: "NSNumber", Code.decimal: "NSDecimalNumber",
        Code.double: "NSNumber", Code.float: "NSNumber", Code.string: "NSString", Code.boolean: "NSNumber", Code.date: "NSDate",
        Code.binary: "NSData", Code.uuid: "NSUUID", Code.uri: "NSURL", Code.transformable: "Array<String>",
    ]

    static func attribute(
        _ name: String, _ code: Int, optional: Bool = false, default value: CompiledDefaultValue? = nil
    )
        -> CompiledAttribute
    {
        CompiledAttribute(
            name: name, typeCode: code, valueClassName: valueClasses[code],
            transformerName: code == Code.transformable ? "NSSecureUnarchiveFromData" : nil, isOptional: optional,
            defaultValue: value, renamingIdentifier: name)
    }

    /// A Codable struct stored inline; its elements are optional, as in every real cache seen.
    static func composite(
        _ name: String, optional: Bool = false, default value: CompiledDefaultValue? = nil, _ elements: [CompiledAttribute]
    ) -> CompiledAttribute {
        CompiledAttribute(
            name: name, typeCode: Code.composite, isOptional: optional, defaultValue: value, renamingIdentifier: name,
            elements: elements.map { element in
                var element = element
                element.isOptional = true
                return element
            })
    }

    /// A to-one: optional, as SwiftData's `Model?`.
    static func toOne(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: Int = 1) -> CompiledRelationship {
        CompiledRelationship(
            name: name, destination: destination, inverse: inverse, maxCount: 1, deleteRule: deleteRule, isOptional: true,
            renamingIdentifier: name)
    }

    /// A to-many: not optional, as SwiftData's `[Model] = []`.
    static func toMany(_ name: String, _ destination: String, inverse: String? = nil, deleteRule: Int = 1) -> CompiledRelationship {
        CompiledRelationship(
            name: name, destination: destination, inverse: inverse, maxCount: 0, deleteRule: deleteRule, isOptional: false,
            renamingIdentifier: name)
    }

    /// Properties in name order, as the decoder returns them.
    static func entity(
        _ name: String, parent: String? = nil, _ attributes: [CompiledAttribute], _ relationships: [CompiledRelationship] = [],
        unique: [[String]] = [], indexes: [CompiledIndex] = []
    ) -> CompiledEntity {
        CompiledEntity(
            name: name, superentity: parent, attributes: attributes.sorted { $0.name < $1.name },
            relationships: relationships.sorted { $0.name < $1.name }, uniqueTuples: unique, indexes: indexes, renamingIdentifier: name)
    }

    /// A UUID's 16 bytes, derived from a label so that every run makes the same ones.
    static func uuid(_ label: String) -> UUID { UUID(bytes: Array(SHA256.hash(data: Data(label.utf8))), version: 4) }

    static func uuidBytes(_ label: String) -> Data { withUnsafeBytes(of: uuid(label).uuid) { Data($0) } }

    static func stringArray(_ elements: [String]) -> FixtureValue {
        .blob(TransformableArray.archive(elements.map(PropertyListValue.string)))
    }

    /// `Decimal` 0 as SwiftData archives it: an `NSDecimalNumberPlaceholder` with a zero mantissa.
    static let decimalZero = CompiledDefaultValue.decimal(mantissa: Data(count: 16), exponent: 0, isNegative: false)

    // MARK: kitchen-sink

    /// Seconds since 2001 at which the kitchen-sink model was "built": its `Date()` default.
    static let kitchenSinkBuilt: Double = 788_918_400.5
    static let kitchenSinkDefaultIdentifier = uuidBytes("kitchen-sink Recipe.identifier default")

    /// Every attribute type, composites (one nested, with an array element and name clashes),
    /// every relationship shape, a sub-entity hierarchy, a unique constraint and fetch indexes.
    /// Numbers: Author 1, Ingredient 2, Liquid 3, Solid 4, Recipe 5, Step 6, Tag 7.
    package static var kitchenSinkModel: CompiledModel {
        let recipe = entity(
            "Recipe",
            [
                attribute("calories", Code.int64, optional: true),
                attribute("code", Code.string),
                attribute("cost", Code.decimal, default: decimalZero),
                attribute("createdAt", Code.date, default: .date(secondsSince2001: kitchenSinkBuilt)),
                attribute("identifier", Code.uuid, default: .uuid(kitchenSinkDefaultIdentifier)),
                attribute("isFavorite", Code.boolean, default: .boolean(false)),
                attribute("keywords", Code.transformable),
                attribute("link", Code.uri, optional: true),
                attribute("memo", Code.string, optional: true),
                attribute("name", Code.string, default: .string("Untitled")),
                // Stored externally when large (`@Attribute(.externalStorage)`): see the README.
                attribute("photo", Code.binary, optional: true),
                composite(
                    "profile", default: .dictionary([:]),
                    [
                        attribute("flavors", Code.binary),
                        attribute("intensity", Code.int64),
                        attribute("name", Code.string),
                        composite("origin", [attribute("country", Code.string), attribute("name", Code.string)]),
                    ]),
                attribute("rating", Code.double, default: .real(0)),
                attribute("ratingCount", Code.int16, default: .integer(0)),
                attribute("servings", Code.int32, default: .integer(2)),
                attribute("sweetness", Code.float, default: .real(0.5)),
            ],
            [
                toOne("author", "Author", inverse: "recipes"),
                toOne("featuredTag", "Tag"),
                toMany("ingredients", "Ingredient", inverse: "recipe", deleteRule: 2),
                toMany("steps", "Step", deleteRule: 2),
                toMany("tags", "Tag", inverse: "recipes"),
            ],
            unique: [["code"]],
            indexes: [
                CompiledIndex(name: "SwiftDataIndexOnBinarycreatedAt", elements: [.init(propertyName: "createdAt")]),
                CompiledIndex(
                    name: "SwiftDataIndexOnBinarynamecreatedAt", elements: [.init(propertyName: "name"), .init(propertyName: "createdAt")]),
            ])
        return CompiledModel(
            versionIdentifiers: ["2.1.0"],
            entities: [
                entity(
                    "Author",
                    [
                        attribute("born", Code.date, optional: true), attribute("email", Code.string, optional: true),
                        attribute("name", Code.string, default: .string("")),
                    ],
                    [toMany("recipes", "Recipe", inverse: "author")]),
                entity(
                    "Ingredient", [attribute("name", Code.string), attribute("position", Code.int64, default: .integer(0))],
                    [toOne("recipe", "Recipe", inverse: "ingredients")]),
                entity(
                    "Liquid", parent: "Ingredient",
                    [
                        attribute("isCarbonated", Code.boolean, default: .boolean(false)),
                        attribute("milliliters", Code.double, default: .real(0)),
                    ]),
                recipe,
                entity(
                    "Solid", parent: "Ingredient",
                    [attribute("cut", Code.string, optional: true), attribute("grams", Code.int32, default: .integer(0))]),
                entity("Step", [attribute("seconds", Code.int64, optional: true), attribute("text", Code.string)]),
                entity(
                    "Tag", [attribute("color", Code.int16, default: .integer(0)), attribute("label", Code.string, default: .string(""))],
                    [toMany("recipes", "Recipe", inverse: "tags")]),
            ])
    }

    /// The file name of the one externally stored photo, and its bytes.
    static let externalPhotoName = uuid("kitchen-sink external photo").uuidString
    static let externalPhoto = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array("JFIF external photo of a Paloma".utf8) + (0..<200).map { UInt8($0) })

    static var kitchenSink: Fixture {
        let json = #"["Grapefruit","Anise"]"#
        var rows: [ModelRow] = [
            ModelRow(
                "Author", 1, ["name": .text("Ada Lovelace"), "email": .text("ada@example.com"), "born": .real(-5_840_035_200)],
                links: ["recipes": [1]]),
            ModelRow("Author", 2, opt: 3, ["name": .text("Émile 🍋"), "email": .null, "born": .null]),
            ModelRow("Tag", 1, ["label": .text("citrus"), "color": .integer(1)]),
            ModelRow("Tag", 2, ["label": .text("bitter"), "color": .integer(Int64(Int16.min))]),
            ModelRow("Tag", 3, ["label": .text("日本語 タグ"), "color": .integer(Int64(Int16.max))]),
            ModelRow(
                "Recipe", 1, opt: 2,
                [
                    "code": .text("NEGRONI"), "name": .text("Negroni"), "calories": .integer(Int64.max), "cost": .decimal("100"),
                    "createdAt": .real(-31_622_400.5), "isFavorite": .integer(1),
                    "link": .text("https://example.com/negroni?glass=rocks&ice=1"),
                    "memo": .text("Stir, don't shake.\u{0}Hidden after a NUL."), "rating": .real(4.75),
                    "ratingCount": .integer(Int64(Int16.max)), "servings": .integer(2), "sweetness": .real(Double(Float(0.3))),
                    "identifier": .blob(uuidBytes("recipe 1")), "keywords": stringArray(["bitter", "classic", "café"]),
                    // Held inline: 0x01 then the bytes (inferred layout, see the README).
                    "photo": .blob(Data([0x01, 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x2A])),
                    "profile.flavors": .blob(Data(json.utf8)), "profile.intensity": .integer(7), "profile.name": .text("Bittersweet"),
                    "profile.origin.country": .text("Italy"), "profile.origin.name": .text("Caffè Casoni, Florence"),
                    "author": .integer(1), "featuredTag": .integer(2),
                ],
                links: ["tags": [1, 2], "steps": [1, 2], "ingredients": [1, 2, 3]]),
            ModelRow(
                "Recipe", 2,
                [
                    "code": .text("PALOMA"), "name": .text("Paloma 🍹🇲🇽"), "calories": .integer(Int64.min), "cost": .decimal("12.5"),
                    "createdAt": .real(788_918_400.123_456), "isFavorite": .integer(0), "link": .null, "memo": .text(""),
                    "rating": .real(3.5), "ratingCount": .integer(0), "servings": .integer(1), "sweetness": .real(Double(Float(0.1))),
                    "identifier": .blob(uuidBytes("recipe 2")), "keywords": stringArray([]),
                    // Held in a file beside the store: 0x02 then the file's name (inferred layout).
                    "photo": .blob(Data([0x02] + Array(externalPhotoName.utf8))),
                    "profile.flavors": .null, "profile.intensity": .null, "profile.name": .null, "profile.origin.country": .null,
                    "profile.origin.name": .null, "author": .integer(2), "featuredTag": .null,
                ],
                links: ["tags": [1], "steps": [3], "ingredients": [4, 5]]),
            // Every optional nil and every default as the model archived it (the same UUID as any
            // other row a default would fill).
            ModelRow(
                "Recipe", 3,
                [
                    "code": .text("DRAFT"), "name": .text(""), "cost": .decimal("0"), "createdAt": .real(kitchenSinkBuilt),
                    "isFavorite": .integer(0), "rating": .real(0), "ratingCount": .integer(0), "servings": .integer(2),
                    "sweetness": .real(0.5), "identifier": .blob(kitchenSinkDefaultIdentifier), "keywords": stringArray([]),
                ]),
            ModelRow("Step", 1, ["text": .text("Stir with ice for 30 seconds."), "seconds": .integer(30)]),
            ModelRow("Step", 2, ["text": .text("Strain into a rocks glass\tover one large cube.\n"), "seconds": .null]),
            ModelRow("Step", 3, ["text": .text("Build in a salted highball."), "seconds": .integer(45)]),
            ModelRow("Step", 4, ["text": .text("Garnish with a cherry."), "seconds": .integer(0)]),
        ]
        // The sub-entities' rows share ZINGREDIENT, told apart by Z_ENT (Liquid 3, Solid 4).
        rows += [
            ModelRow(
                "Liquid", 1,
                [
                    "name": .text("Gin"), "position": .integer(0), "milliliters": .real(30), "isCarbonated": .integer(0),
                    "recipe": .integer(1),
                ]),
            ModelRow(
                "Liquid", 2,
                [
                    "name": .text("Campari"), "position": .integer(1), "milliliters": .real(30), "isCarbonated": .integer(0),
                    "recipe": .integer(1),
                ]),
            ModelRow(
                "Solid", 3,
                ["name": .text("Orange peel"), "position": .integer(2), "grams": .integer(2), "cut": .text("twist"), "recipe": .integer(1)]),
            ModelRow(
                "Liquid", 4,
                [
                    "name": .text("Grapefruit soda"), "position": .integer(0), "milliliters": .real(120.5), "isCarbonated": .integer(1),
                    "recipe": .integer(2),
                ]),
            ModelRow(
                "Solid", 5, ["name": .text("Salt"), "position": .integer(1), "grams": .integer(1), "cut": .null, "recipe": .integer(2)]),
        ]
        var store = ModelStore(model: kitchenSinkModel, uuid: "7A1E5C0D-5B1C-4E2A-9F3D-0C4B2A1E0001", rows: rows)
        // Author 3 was deleted: Z_MAX stays above the largest key.
        store.maximumPrimaryKeyFloor = ["Author": 3]
        store.walRows = [
            ModelRow("Tag", 4, ["label": .text("wal-only"), "color": .integer(4)]),
            ModelRow("Step", 5, ["text": .text("Stir, then strain."), "seconds": .integer(20)]),
            ModelRow(
                "Recipe", 4,
                [
                    "code": .text("MARTINEZ"), "name": .text("Martinez"), "cost": .decimal("7.25"), "createdAt": .real(789_000_000),
                    "isFavorite": .integer(1), "rating": .real(4), "ratingCount": .integer(1), "servings": .integer(1),
                    "sweetness": .real(0.75), "identifier": .blob(uuidBytes("recipe 4")), "keywords": stringArray(["wal"]),
                    "profile.flavors": .blob(Data(#"["Cherry"]"#.utf8)), "profile.origin.country": .text("USA"), "author": .integer(1),
                    "featuredTag": .integer(4),
                ],
                // Step 4 was in the main file without a recipe: its hidden column changes in the WAL.
                links: ["tags": [2, 4], "steps": [4, 5], "ingredients": [6]]),
            ModelRow(
                "Liquid", 6,
                [
                    "name": .text("Old Tom gin"), "position": .integer(0), "milliliters": .real(45), "isCarbonated": .integer(0),
                    "recipe": .integer(4),
                ]),
        ]
        store.foreignTables = [
            ForeignTable(
                name: "sqlitemanager_extras", columnDefinitions: "id INTEGER PRIMARY KEY, name TEXT, value TEXT",
                rows: [
                    [.integer(1), .text("last_opened"), .text("2025-03-01 09:30:00")],
                    [.integer(2), .text("window"), .text(#"{"w":1024,"h":768}"#)],
                ])
        ]
        store.externalData = [externalPhotoName: externalPhoto]
        return Fixture(
            name: "kitchen-sink",
            summary:
                "Every case of model-cache.md: all attribute types, defaults of each kind, a nested composite with a JSON array element and column-name clashes, to-one with and without inverse, to-many with inverse, to-many without inverse (hidden `Z5STEPS` on ZSTEP), many-to-many (`Z_5TAGS`), Ingredient with sub-entities Liquid and Solid in one table, a unique constraint and `#Index`es, inline and external-file Binary values, a `sqlitemanager_extras` table of 2 rows, hostile values (NUL, emoji, dates before 2001, Int64 extremes, empty strings, NULLs); its -wal adds 1 recipe, 1 tag, 1 step, 1 liquid, 2 join rows and a hidden-column update.",
            store: store)
    }

    // MARK: bennie-game

    /// The BennieGame app's SwiftData models (seed 002: PlayerData, ActivityProgress,
    /// AppSettings, ParentSettings, ApprovedVideo, VideoRecord, SessionMetrics), unversioned, so
    /// its version identifier is "1.0.0" like TimeQuest V1's although nothing else is alike.
    /// Numbers: ActivityProgress 1, AppSettings 2, ApprovedVideo 3, ParentSettings 4, PlayerData 5,
    /// SessionMetrics 6, VideoRecord 7.
    package static var bennieGameModel: CompiledModel {
        CompiledModel(
            versionIdentifiers: ["1.0.0"],
            entities: [
                entity(
                    "ActivityProgress",
                    [
                        // ActivityType's raw value ("raetsel_puzzle"), as the app keys its progress.
                        attribute("activityType", Code.string),
                        attribute("currentDifficulty", Code.double, default: .real(0.5)),
                        attribute("currentLevel", Code.int64, default: .integer(1)),
                        attribute("highestLevelCompleted", Code.int64, default: .integer(0)),
                        attribute("isLocked", Code.boolean, default: .boolean(false)),
                        attribute("lastPlayed", Code.date, optional: true),
                        attribute("successRate", Code.double, default: .real(0)),
                        attribute("totalLevelsCompleted", Code.int64, default: .integer(0)),
                    ],
                    [toOne("player", "PlayerData", inverse: "activityProgress")]),
                entity(
                    "AppSettings",
                    [
                        attribute("appVersion", Code.string, default: .string("1.0")),
                        attribute("audioEnabled", Code.boolean, default: .boolean(true)),
                        attribute("effectsVolume", Code.double, default: .real(0.7)),
                        attribute("lastDailyReset", Code.date, optional: true),
                        attribute("musicVolume", Code.double, default: .real(0.3)),
                        attribute("voiceVolume", Code.double, default: .real(1)),
                    ],
                    [toOne("parentSettings", "ParentSettings", inverse: "appSettings", deleteRule: 2)]),
                entity(
                    "ApprovedVideo",
                    [
                        attribute("addedAt", Code.date, default: .date(secondsSince2001: 762_505_200)),
                        attribute("duration", Code.double, default: .real(0)),
                        attribute("id", Code.string),
                        attribute("playCount", Code.int64, default: .integer(0)),
                        attribute("thumbnailURL", Code.uri),
                        attribute("title", Code.string),
                    ],
                    [toOne("parentSettings", "ParentSettings", inverse: "approvedVideos")]),
                entity(
                    "ParentSettings",
                    [
                        attribute("dailyTimeLimitMinutes", Code.int64, default: .integer(60)),
                        attribute("lockedActivities", Code.transformable),
                    ],
                    [
                        toOne("appSettings", "AppSettings", inverse: "parentSettings"),
                        toMany("approvedVideos", "ApprovedVideo", inverse: "parentSettings", deleteRule: 2),
                    ]),
                entity(
                    "PlayerData",
                    [
                        attribute("coins", Code.int64, default: .integer(0)),
                        attribute("createdAt", Code.date, default: .date(secondsSince2001: 762_505_200)),
                        attribute("id", Code.string),
                        attribute("lastPlayedDate", Code.date, optional: true),
                        composite(
                            "learningProfile", default: .dictionary([:]),
                            [
                                attribute("globalDifficultyLevel", Code.double),
                                attribute("numberRange", Code.int64),
                                attribute("puzzleColorCount", Code.int64),
                                attribute("puzzleGridSizePreference", Code.int64),
                            ]),
                        attribute("name", Code.string),
                        attribute("todayActivitiesCompleted", Code.int64, default: .integer(0)),
                        attribute("todayPlayTimeMinutes", Code.int64, default: .integer(0)),
                        attribute("totalCoinsEarned", Code.int64, default: .integer(0)),
                    ],
                    [
                        toMany("activityProgress", "ActivityProgress", inverse: "player", deleteRule: 2),
                        toMany("sessions", "SessionMetrics", inverse: "player", deleteRule: 2),
                        toMany("todayVideosWatched", "VideoRecord", inverse: "player", deleteRule: 2),
                    ],
                    // `@Attribute(.unique) var id: String` (seed: "PlayerData has @Attribute(.unique) on id").
                    unique: [["id"]]),
                entity(
                    "SessionMetrics",
                    [
                        attribute("activitiesCompleted", Code.int64, default: .integer(0)),
                        attribute("averageSolveTime", Code.double, default: .real(0)),
                        attribute("coinsEarned", Code.int64, default: .integer(0)),
                        attribute("endTime", Code.date, optional: true),
                        attribute("id", Code.uuid, default: .uuid(uuidBytes("bennie-game SessionMetrics.id default"))),
                        attribute("mistakes", Code.int64, default: .integer(0)),
                        attribute("startTime", Code.date, default: .date(secondsSince2001: 762_505_200)),
                    ],
                    [toOne("player", "PlayerData", inverse: "sessions")]),
                entity(
                    "VideoRecord",
                    [
                        attribute("duration", Code.double, default: .real(0)),
                        attribute("playerId", Code.string),
                        attribute("videoId", Code.string),
                        attribute("videoTitle", Code.string),
                        attribute("watchedAt", Code.date, default: .date(secondsSince2001: 762_505_200)),
                    ],
                    [toOne("player", "PlayerData", inverse: "todayVideosWatched")]),
            ])
    }

    static var bennieGame: Fixture {
        // 2025-03-01T07:00:00Z, and hours after it.
        let day: Double = 762_505_200
        let hour: Double = 3600
        let rows: [ModelRow] = [
            ModelRow(
                "PlayerData", 1, opt: 5,
                [
                    "id": .text("alexander"), "name": .text("Alexander"), "coins": .integer(12), "totalCoinsEarned": .integer(47),
                    "todayPlayTimeMinutes": .integer(23), "todayActivitiesCompleted": .integer(4), "createdAt": .real(day - 14 * 24 * hour),
                    "lastPlayedDate": .real(day + 9 * hour), "learningProfile.globalDifficultyLevel": .real(0.6),
                    "learningProfile.numberRange": .integer(20), "learningProfile.puzzleColorCount": .integer(3),
                    "learningProfile.puzzleGridSizePreference": .integer(4),
                ],
                links: ["activityProgress": [1, 2], "sessions": [1, 2], "todayVideosWatched": [1]]),
            ModelRow(
                "PlayerData", 2, opt: 2,
                [
                    "id": .text("oliver"), "name": .text("Oliver"), "coins": .integer(7), "totalCoinsEarned": .integer(31),
                    "todayPlayTimeMinutes": .integer(15), "todayActivitiesCompleted": .integer(0), "createdAt": .real(day - 7 * 24 * hour),
                    "lastPlayedDate": .null, "learningProfile.globalDifficultyLevel": .real(0.3),
                    "learningProfile.numberRange": .integer(10),
                    "learningProfile.puzzleColorCount": .integer(2), "learningProfile.puzzleGridSizePreference": .integer(3),
                ],
                links: ["sessions": [3]]),
            ModelRow(
                "ActivityProgress", 1, opt: 4,
                [
                    "activityType": .text("raetsel_puzzle"), "currentLevel": .integer(5), "highestLevelCompleted": .integer(4),
                    "totalLevelsCompleted": .integer(12), "successRate": .real(0.8), "currentDifficulty": .real(0.55),
                    "isLocked": .integer(0), "lastPlayed": .real(day + 9 * hour), "player": .integer(1),
                ]),
            ModelRow(
                "ActivityProgress", 2, opt: 3,
                [
                    "activityType": .text("zahlen_wuerfel"), "currentLevel": .integer(3), "highestLevelCompleted": .integer(2),
                    "totalLevelsCompleted": .integer(8), "successRate": .real(0.75), "currentDifficulty": .real(0.4),
                    "isLocked": .integer(0), "lastPlayed": .real(day + 8.5 * hour), "player": .integer(1),
                ]),
            ModelRow(
                "SessionMetrics", 1,
                [
                    "id": .blob(uuidBytes("bennie-game session 1")), "startTime": .real(day + 8 * hour), "endTime": .real(day + 8.4 * hour),
                    "activitiesCompleted": .integer(3), "coinsEarned": .integer(3), "mistakes": .integer(2),
                    "averageSolveTime": .real(41.5), "player": .integer(1),
                ]),
            // Still running when the app was last closed: no end time.
            ModelRow(
                "SessionMetrics", 2,
                [
                    "id": .blob(uuidBytes("bennie-game session 2")), "startTime": .real(day + 9 * hour), "endTime": .null,
                    "activitiesCompleted": .integer(1), "coinsEarned": .integer(1), "mistakes": .integer(0),
                    "averageSolveTime": .real(28.25), "player": .integer(1),
                ]),
            ModelRow(
                "SessionMetrics", 3,
                [
                    "id": .blob(uuidBytes("bennie-game session 3")), "startTime": .real(day + 10 * hour),
                    "endTime": .real(day + 10.25 * hour), "activitiesCompleted": .integer(2), "coinsEarned": .integer(2),
                    "mistakes": .integer(5), "averageSolveTime": .real(63), "player": .integer(2),
                ]),
            ModelRow(
                "VideoRecord", 1,
                [
                    "videoId": .text("dQw4w9WgXcQ"), "videoTitle": .text("Test Video 1"), "duration": .real(300),
                    "watchedAt": .real(day + 9.5 * hour), "playerId": .text("alexander"), "player": .integer(1),
                ]),
            ModelRow(
                "AppSettings", 1, opt: 2,
                [
                    "audioEnabled": .integer(1), "musicVolume": .real(0.3), "voiceVolume": .real(1), "effectsVolume": .real(0.7),
                    "appVersion": .text("1.0"), "lastDailyReset": .real(day), "parentSettings": .integer(1),
                ]),
            ModelRow(
                "ParentSettings", 1,
                ["dailyTimeLimitMinutes": .integer(60), "lockedActivities": stringArray(["zahlen_waehle"]), "appSettings": .integer(1)],
                links: ["approvedVideos": [1]]),
            ModelRow(
                "ApprovedVideo", 1,
                [
                    "id": .text("dQw4w9WgXcQ"), "title": .text("Test Video 1"),
                    "thumbnailURL": .text("https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg"), "duration": .real(300),
                    "addedAt": .real(day - 2 * 24 * hour), "playCount": .integer(1), "parentSettings": .integer(1),
                ]),
        ]
        return Fixture(
            name: "bennie-game",
            summary:
                "The BennieGame app (seed 002), unversioned SwiftData so version identifier 1.0.0 like TimeQuest V1 but nothing alike: PlayerData alexander (2 activity progresses, 2 sessions, 1 watched video) and oliver (1 session), AppSettings with ParentSettings (one-to-one) and 1 approved video; LearningProfile as a composite, a unique player id, UUID session ids.",
            store: ModelStore(model: bennieGameModel, uuid: "B3E71E00-0A1C-4D2B-8E5F-6A7B8C9D0001", rows: rows))
    }
}
