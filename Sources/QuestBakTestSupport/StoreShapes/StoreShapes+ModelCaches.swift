import Foundation
import QuestBakFixtures
import QuestBakKit

extension StoreShapes {
    /// Stores whose model caches use every form Core Data writes that enters the model hashes
    /// (issue #23, section 2): each must be read in full, its hashes reproduced, and the store
    /// backed up by its model. Written by `ModelStoreWriter`, so the metadata's hashes are
    /// computed from the same model the cache holds.
    public static var modelCaches: [StoreShape] {
        ModelCacheShapes.all.map { shape in
            StoreShape("model cache: \(shape.name)") { folder in
                let url = folder.appendingPathComponent("default.store")
                try ModelStoreWriter.write(shape.store, to: url)
                return url
            }
        }
    }
}

/// The stores behind `StoreShapes.modelCaches`, by name, for tests that check one of them.
public enum ModelCacheShapes {
    package struct Shape: Sendable {
        package var name: String
        package var store: ModelStore
    }

    package static var all: [Shape] { [inheritance, arrayDefault, storageFlags, indexes, propertyModifiers] }

    /// Writes the shape named `name` as `folder/default.store`.
    public static func make(_ name: String, in folder: URL) throws -> URL {
        guard let shape = all.first(where: { $0.name == name }) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no model-cache shape \(name)"])
        }
        let url = folder.appendingPathComponent("default.store")
        try ModelStoreWriter.write(shape.store, to: url)
        return url
    }

    public static var names: [String] { all.map(\.name) }

    /// The empty store a next build of the app would make for shape `name`, version 2.0.0: its
    /// root entities gain an optional attribute (which every sub-entity inherits), and so does each
    /// sub-entity that has none of its own (a sub-entity cannot declare what it inherits), written
    /// as `folder/default.store`.
    public static func makeNextBuild(of name: String, in folder: URL) throws -> URL {
        guard var store = all.first(where: { $0.name == name })?.store else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "no model-cache shape \(name)"])
        }
        store.rows = []
        store.model.versionIdentifiers = ["2.0.0"]
        var entities = store.model.entities
        let parents = Set(entities.compactMap(\.superentity))
        for index in entities.indices {
            entities[index].inheritedProperties = []
            let isRoot = entities[index].superentity == nil
            guard isRoot || !parents.contains(entities[index].name) else { continue }
            let added = attribute(isRoot ? "zest" : "origin", Code.string, optional: true)
            entities[index].attributes = (entities[index].attributes + [added]).sorted { $0.name < $1.name }
        }
        store.model.entities = withInheritance(entities)
        let url = folder.appendingPathComponent("default.store")
        try ModelStoreWriter.write(store, to: url)
        return url
    }

    typealias Code = CompiledAttribute.TypeCode

    static func attribute(
        _ name: String, _ code: Int, optional: Bool = false, default value: CompiledDefaultValue? = nil, flags: Int = 0
    ) -> CompiledAttribute {
        let classes: [Int: String] = [
            Code.int32: "NSNumber", Code.int64: "NSNumber", Code.double: "NSNumber", Code.string: "NSString", Code.binary: "NSData",
            Code.transformable: "Array<String>",
        ]
        return CompiledAttribute(
            name: name, typeCode: code, valueClassName: classes[code],
            transformerName: code == Code.transformable ? "NSSecureUnarchiveFromData" : nil, isOptional: optional, defaultValue: value,
            renamingIdentifier: name, flags: flags)
    }

    static func toOne(_ name: String, _ destination: String, inverse: String?) -> CompiledRelationship {
        CompiledRelationship(
            name: name, destination: destination, inverse: inverse, maxCount: 1, isOptional: true, renamingIdentifier: name)
    }

    static func toMany(_ name: String, _ destination: String, inverse: String?) -> CompiledRelationship {
        CompiledRelationship(
            name: name, destination: destination, inverse: inverse, maxCount: 0, deleteRule: 2, isOptional: false,
            renamingIdentifier: name)
    }

    /// The names of every property the ancestors of `parent` (and `parent`) declare: what Core
    /// Data lists, as proxies, in a sub-entity's `NSProperties`.
    static func inherited(from parent: String, in entities: [CompiledEntity]) -> [String] {
        var names: [String] = []
        var next: String? = parent
        while let name = next, let entity = entities.first(where: { $0.name == name }) {
            names += entity.attributes.map(\.name) + entity.relationships.map(\.name)
            next = entity.superentity
        }
        return names.sorted()
    }

    /// Core Data's sub-entity: it lists every inherited property besides its own, transient
    /// ones among them.
    static func withInheritance(_ entities: [CompiledEntity]) -> [CompiledEntity] {
        entities.map { entity in
            var entity = entity
            var next = entity.superentity
            if let parent = next { entity.inheritedProperties = inherited(from: parent, in: entities) }
            var transient = Set(entity.transientProperties)
            while let name = next, let ancestor = entities.first(where: { $0.name == name }) {
                transient.formUnion(ancestor.transientProperties)
                next = ancestor.superentity
            }
            entity.transientProperties = transient.sorted()
            return entity
        }
    }

    static func blob(_ text: String) -> FixtureValue { .blob(Data([0x01] + Array(text.utf8))) }

    // MARK: Shapes

    /// An abstract Ingredient whose sub-entities Liquid (with its own sub-entity Syrup) and Solid
    /// share ZINGREDIENT, every inherited property (a to-one among them, and a transient one that
    /// has no column) listed as a proxy.
    /// Numbers: Ingredient 1, Liquid 2, Syrup 3, Solid 4, Recipe 5. ZINGREDIENT holds 6 rows:
    /// Liquid 3 + Syrup 1 + Solid 2.
    static var inheritance: Shape {
        let entities = withInheritance([
            CompiledEntity(
                name: "Ingredient", isAbstract: true,
                attributes: [attribute("name", Code.string), attribute("position", Code.int64, default: .integer(0))],
                relationships: [toOne("recipe", "Recipe", inverse: "ingredients")], transientProperties: ["displayName"],
                renamingIdentifier: "Ingredient"),
            CompiledEntity(
                name: "Liquid", superentity: "Ingredient", attributes: [attribute("milliliters", Code.double, default: .real(0))],
                renamingIdentifier: "Liquid"),
            CompiledEntity(
                name: "Recipe", attributes: [attribute("title", Code.string)],
                relationships: [toMany("ingredients", "Ingredient", inverse: "recipe")], renamingIdentifier: "Recipe"),
            CompiledEntity(
                name: "Solid", superentity: "Ingredient", attributes: [attribute("grams", Code.int32, optional: true)],
                renamingIdentifier: "Solid"),
            CompiledEntity(
                name: "Syrup", superentity: "Liquid", attributes: [attribute("sugar", Code.double, default: .real(0.5))],
                renamingIdentifier: "Syrup"),
        ])
        let rows = [
            ModelRow("Recipe", 1, ["title": .text("Negroni")], links: ["ingredients": [1, 2, 3]]),
            ModelRow("Recipe", 2, ["title": .text("Old Fashioned")], links: ["ingredients": [4, 5, 6]]),
            ModelRow("Liquid", 1, ["name": .text("Gin"), "position": .integer(0), "milliliters": .real(30), "recipe": .integer(1)]),
            ModelRow("Liquid", 2, ["name": .text("Campari"), "position": .integer(1), "milliliters": .real(30), "recipe": .integer(1)]),
            ModelRow("Solid", 3, ["name": .text("Orange peel"), "position": .integer(2), "grams": .integer(2), "recipe": .integer(1)]),
            ModelRow("Liquid", 4, ["name": .text("Rye"), "position": .integer(0), "milliliters": .real(60), "recipe": .integer(2)]),
            ModelRow(
                "Syrup", 5,
                [
                    "name": .text("Demerara"), "position": .integer(1), "milliliters": .real(7.5), "sugar": .real(0.66),
                    "recipe": .integer(2),
                ]),
            ModelRow("Solid", 6, ["name": .text("Cherry"), "position": .integer(2), "grams": .null, "recipe": .integer(2)]),
        ]
        return Shape(
            name: "abstract parent with inherited properties",
            store: ModelStore(
                model: CompiledModel(versionIdentifiers: ["1.0.0"], entities: entities), uuid: "5E1F0A11-0001-4C0D-8A7E-000000000001",
                rows: rows))
    }

    /// A transformable `[String]` whose default Core Data archived as an `NSArray`.
    static var arrayDefault: Shape {
        let entity = CompiledEntity(
            name: "Playlist",
            attributes: [
                attribute("genres", Code.transformable, default: .array([.string("jazz"), .string("blues")])),
                attribute("name", Code.string), attribute("skipped", Code.transformable, optional: true, default: .array([])),
            ], renamingIdentifier: "Playlist")
        let rows = [
            ModelRow(
                "Playlist", 1,
                [
                    "name": .text("Evening"), "genres": .blob(TransformableArray.archive([.string("jazz"), .string("blues")])),
                    "skipped": .null,
                ]),
            ModelRow(
                "Playlist", 2,
                [
                    "name": .text("Morning"), "genres": .blob(TransformableArray.archive([])),
                    "skipped": .blob(TransformableArray.archive([])),
                ]),
        ]
        return Shape(
            name: "NSArray default",
            store: ModelStore(
                model: CompiledModel(versionIdentifiers: ["1.0.0"], entities: [entity]), uuid: "5E1F0A11-0002-4C0D-8A7E-000000000002",
                rows: rows))
    }

    /// Binary attributes whose `NSFlagsKey` is not 0: external storage (4), preserved on deletion
    /// (0x10), both. Every value is held inline (0x01 then the bytes).
    static var storageFlags: Shape {
        typealias Flags = CompiledAttribute.Flags
        let entity = CompiledEntity(
            name: "Photo",
            attributes: [
                attribute("caption", Code.string, optional: true, flags: Flags.preservesValueOnDeletion),
                attribute("full", Code.binary, optional: true, flags: Flags.externalStorage),
                attribute("original", Code.binary, optional: true, flags: Flags.externalStorage | Flags.preservesValueOnDeletion),
                attribute("thumbnail", Code.binary, optional: true),
            ], renamingIdentifier: "Photo")
        let rows = [
            ModelRow(
                "Photo", 1, ["caption": .text("Harbour"), "full": blob("full bytes"), "original": blob("raw"), "thumbnail": blob("t")]),
            ModelRow("Photo", 2, ["caption": .null, "full": .null, "original": .null, "thumbnail": .null]),
        ]
        return Shape(
            name: "binary attributes with storage flags",
            store: ModelStore(
                model: CompiledModel(versionIdentifiers: ["1.0.0"], entities: [entity]), uuid: "5E1F0A11-0003-4C0D-8A7E-000000000003",
                rows: rows))
    }

    /// Read-only properties (`NSIsReadOnly`) and properties with a version hash modifier of their
    /// own, an attribute and a relationship of each.
    static var propertyModifiers: Shape {
        var body = attribute("body", Code.string, optional: true)
        body.isReadOnly = true
        var title = attribute("title", Code.string)
        title.versionHashModifier = "v2"
        var folder = toOne("folder", "Folder", inverse: "notes")
        folder.versionHashModifier = "moved"
        var notes = toMany("notes", "Note", inverse: "folder")
        notes.isReadOnly = true
        let entities = [
            CompiledEntity(
                name: "Folder", attributes: [attribute("name", Code.string)], relationships: [notes], renamingIdentifier: "Folder"),
            CompiledEntity(name: "Note", attributes: [body, title], relationships: [folder], renamingIdentifier: "Note"),
        ]
        let rows = [
            ModelRow("Folder", 1, ["name": .text("Inbox")], links: ["notes": [1]]),
            ModelRow("Note", 1, ["title": .text("Groceries"), "body": .text("Limes"), "folder": .integer(1)]),
            ModelRow("Note", 2, ["title": .text("Loose"), "body": .null, "folder": .null]),
        ]
        return Shape(
            name: "read-only properties and property hash modifiers",
            store: ModelStore(
                model: CompiledModel(versionIdentifiers: ["1.0.0"], entities: entities), uuid: "5E1F0A11-0005-4C0D-8A7E-000000000005",
                rows: rows))
    }

    /// Fetch indexes with their compound-index form, an index on a to-one, and a unique constraint.
    static var indexes: Shape {
        let shelf = CompiledEntity(
            name: "Shelf", attributes: [attribute("label", Code.string)], relationships: [toMany("books", "Book", inverse: "shelf")],
            renamingIdentifier: "Shelf")
        let book = CompiledEntity(
            name: "Book",
            attributes: [attribute("author", Code.string), attribute("isbn", Code.string), attribute("title", Code.string)],
            relationships: [toOne("shelf", "Shelf", inverse: "books")], uniqueTuples: [["isbn"]],
            indexes: [
                CompiledIndex(name: "byAuthorTitle", elements: [.init(propertyName: "author"), .init(propertyName: "title")]),
                CompiledIndex(name: "byTitleDescending", elements: [.init(propertyName: "title", ascending: false)]),
                CompiledIndex(name: "byShelf", elements: [.init(propertyName: "shelf")]),
            ],
            compoundIndexes: [["author", "title"], ["shelf"]], renamingIdentifier: "Book")
        let rows = [
            ModelRow("Shelf", 1, ["label": .text("Fiction")], links: ["books": [1, 2]]),
            ModelRow(
                "Book", 1,
                ["author": .text("Le Guin"), "isbn": .text("978-0441478125"), "title": .text("The Left Hand"), "shelf": .integer(1)]),
            ModelRow(
                "Book", 2,
                ["author": .text("Calvino"), "isbn": .text("978-0156439619"), "title": .text("Invisible Cities"), "shelf": .integer(1)]),
            ModelRow("Book", 3, ["author": .text("Anon"), "isbn": .text("000"), "title": .text("Untitled"), "shelf": .null]),
        ]
        return Shape(
            name: "compound and fetch indexes",
            store: ModelStore(
                model: CompiledModel(versionIdentifiers: ["1.0.0"], entities: [book, shelf]), uuid: "5E1F0A11-0004-4C0D-8A7E-000000000004",
                rows: rows))
    }
}
