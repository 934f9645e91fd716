import Foundation
import GRDB

/// What an inspection finds in any Core Data / SwiftData store (`QuestBak.inspect(store:schemas:)`).
public struct StoreInspection: Sendable, Equatable, Encodable {
    /// One entity of the store: its table and rows.
    public struct EntitySummary: Sendable, Equatable, Encodable {
        /// The entity's number (`Z_ENT`).
        public var number: Int64
        /// The entity's name.
        public var name: String
        /// The table its rows are in.
        public var table: String
        /// Its rows.
        public var rows: Int
        /// `Z_MAX`: the highest key ever handed out, which deleted rows leave above the largest `Z_PK`.
        public var maximumPrimaryKey: Int64
        /// For a table shared with sub-entities: its rows by entity (`Z_ENT`), the root first when
        /// it has rows of its own, then each sub-entity in entity-number order; rows whose `Z_ENT`
        /// names no entity of the table last, as "Z_ENT <n>". Empty for a table of one entity.
        public var rowsByEntity: [EntityRows] = []
    }

    /// Rows of one entity in a table shared with others.
    public struct EntityRows: Sendable, Equatable, Encodable {
        /// The entity's name.
        public var name: String
        /// Its rows.
        public var rows: Int
    }

    /// The store's path, as reports write it (the public face is `store`).
    package var path: String
    /// The store inspected.
    public var store: URL { URL(fileURLWithPath: path) }
    /// The store's UUID, from its metadata.
    public var uuid: String
    /// The model version identifiers in its metadata.
    public var versionIdentifiers: [String]
    /// The Core Data framework version that last wrote its metadata.
    public var frameworkVersion: Int64?
    /// Every entity, in entity-number order.
    public var entities: [EntitySummary]
    /// Rows in Core Data's own tables (persistent history, CloudKit mirroring), by table.
    public var bookkeepingRows: [String: Int]
    /// Committed frames that were still only in `-wal` when the store was read.
    public var walFrames: Int
    /// The candidate schema (a known app's version, none unless the caller gave some) whose model
    /// hashes equal the stored ones, if any: the version that app can open without migrating.
    public var hashesMatchVersion: String?
    /// The candidate schema the tables have, if any.
    public var schemaVersion: String?
    /// Why the store is not of a candidate schema, when it has a candidate's entities but is not.
    public var schemaProblem: String?
    /// Tables that belong to no entity (a many-to-many join table, another tool's table), with
    /// their rows: an export carries them as they are.
    public var otherTables: [String: Int]
    /// What is odd about the store, one sentence each (a `Z_MAX` below the largest `Z_PK`).
    public var warnings: [String]
    /// The store's own model, decoded from `Z_MODELCACHE`; nil when the store has none.
    public var model: ModelSummary?
    /// How an export writes the store's records: "timequest" (by a candidate schema: the archive
    /// format's word, from its first app), "model" (by the store's own model) or "generic" (by its
    /// tables), as `source.schema` says.
    public var backup: String
    /// Why a store of no candidate schema is backed up by its tables, not by its model.
    public var backupReason: String?

    /// The store's own model, decoded from `Z_MODELCACHE`.
    public struct ModelSummary: Sendable, Equatable, Encodable {
        /// Entities in the model.
        public var entities: Int
        /// The model's version identifiers.
        public var versionIdentifiers: [String]
        /// Whether the hashes recomputed from the decoded model are the metadata's.
        public var hashesMatch: Bool
        /// Entities whose recomputed hash differs from the metadata's (or that only one side has),
        /// then "checksum" and "digest" when those differ.
        public var differingEntities: [String]
        /// Forms the decoder met that the spec marks as inference, or did not know.
        public var notes: [String]
        /// Why the cache could not be decoded, when it could not (then the counts are 0).
        public var problem: String?
        /// The decoded entities, in the model's order.
        public var entityDetails: [EntityDetail]
        /// How the model maps onto the tables where that is inferred rather than seen (spec).
        public var layoutNotes: [String]
    }

    /// One entity of the decoded model.
    public struct EntityDetail: Sendable, Equatable, Encodable {
        /// The entity's name.
        public var name: String
        /// Its parent entity, if any.
        public var superentity: String?
        /// Whether it is abstract (it has no rows of its own).
        public var isAbstract: Bool
        /// The ancestors' properties the model lists for this entity too (by name).
        public var inheritedProperties: [String]
        /// Properties Core Data keeps in memory only: no column, not hashed.
        public var transientProperties: [String]
        /// `name: Type`, `?` after an optional's type; a composite's elements in braces.
        public var attributes: [String]
        /// `name: Destination` (`[Destination]` for a to-many) and its inverse, if any.
        public var relationships: [String]
        /// Its uniqueness constraints, each a list of property names.
        public var uniqueTuples: [[String]]
        /// Its indexes, by name.
        public var indexes: [String]
    }
}

// In an extension, so the struct keeps its synthesized memberwise initializer.
extension StoreInspection {
    package init(snapshot: StoreSnapshot, candidates: [ModelVersion]) throws {
        let path = snapshot.path
        self = try snapshot.read { db in
            var model = try ModelSummary(db)
            let metadata = try StoreReader.metadata(db, path: path)
            var entities: [EntitySummary] = []
            let keys = try StoreReader.entityKeys(db)
            for (key, table) in try StoreReader.modelTables(db) {
                var summary = EntitySummary(
                    number: key.number, name: key.name, table: table, rows: try StoreReader.rowCount(db, table: table),
                    maximumPrimaryKey: key.maximumPrimaryKey)
                summary.rowsByEntity = try StoreInspection.rowsByEntity(db, table: table, root: key, keys: keys)
                entities.append(summary)
            }
            var schemaVersion: String?
            var problem: String?
            var backup = StoreDescription.Kind.knownSchema.rawValue
            var backupReason: String?
            var warnings = try StoreInspection.warnings(db, model: model)
            do {
                let (description, odd) = try StoreDescription.resolve(db, path: path, candidates: candidates)
                warnings += odd
                switch description {
                case .knownVersion(let version):
                    schemaVersion = version.versionIdentifier
                case .model(let layout):
                    backup = StoreDescription.Kind.model.rawValue
                    model?.layoutNotes = layout.notes
                    warnings += layout.warnings
                case .tables(let reason):
                    backup = StoreDescription.Kind.generic.rawValue
                    backupReason = reason
                }
            } catch let error as StoreError {
                // Only a store with TimeQuest's entities is diagnosed against TimeQuest: another
                // app's "1.0.0" store is not a damaged TimeQuest store.
                problem = error.localizedDescription
            }
            return StoreInspection(
                path: path, uuid: metadata.uuid, versionIdentifiers: metadata.versionIdentifiers,
                frameworkVersion: metadata.frameworkVersion, entities: entities,
                bookkeepingRows: try StoreReader.bookkeepingRowCounts(db), walFrames: snapshot.walFrameCount,
                hashesMatchVersion: metadata.versionMatchingHashes(in: candidates)?.versionIdentifier,
                schemaVersion: schemaVersion, schemaProblem: problem,
                otherTables: Dictionary(
                    uniqueKeysWithValues: try StoreReader.otherTables(db).map { ($0.name, try StoreReader.rowCount(db, table: $0.name)) }),
                warnings: warnings, model: model, backup: backup, backupReason: backupReason)
        }
    }
}

extension StoreInspection {
    /// How a table shared by an entity and its sub-entities divides its rows between them.
    static func rowsByEntity(_ db: Database, table: String, root: EntityKey, keys: [EntityKey]) throws -> [EntityRows] {
        var members = [root]
        var index = 0
        while index < members.count {
            let parent = members[index].number
            let children = keys.filter { $0.superNumber == parent && $0.number != parent && !members.contains($0) }
            members += children
            index += 1
        }
        guard members.count > 1 else { return [] }
        // Grouped by the stored value itself (quote() tells 3 from '3' and 3.0): only an integer
        // Z_ENT is an entity's.
        var counts: [Int64: Int] = [:]
        var strays: [(value: String, rows: Int)] = []
        for row in try Row.fetchAll(
            db,
            sql:
                "SELECT CASE WHEN typeof(\(CoreDataSQL.entityColumn)) = 'integer' THEN \(CoreDataSQL.entityColumn) END, quote(\(CoreDataSQL.entityColumn)), count(*) FROM \(table.quotedSQLIdentifier) GROUP BY 2 ORDER BY 2"
        ) {
            let number: Int64? = row[0]
            if let number, members.contains(where: { $0.number == number }) {
                counts[number] = row[2]
            } else {
                strays.append((value: row[1] as String, rows: row[2] as Int))
            }
        }
        var result: [EntityRows] = []
        for member in [root] + members.dropFirst().sorted(by: { $0.number < $1.number }) {
            let rows = counts[member.number] ?? 0
            if member.number != root.number || rows > 0 { result.append(EntityRows(name: member.name, rows: rows)) }
        }
        return result + strays.map { EntityRows(name: "\(CoreDataSQL.entityColumn) \($0.value)", rows: $0.rows) }
    }
}

extension StoreInspection.ModelSummary {
    /// The store's model cache checked against its metadata; nil when there is no cache.
    package init?(_ db: Database) throws {
        guard let content = try StoreReader.modelCache(db) else { return nil }
        let metadata = try StoreReader.metadata(db, path: "")
        do {
            let model = try ModelCacheDecoder.decode(content)
            let differing = metadata.hashDifferences(from: ModelVersionHashes(model: model))
            self.init(
                entities: model.entities.count, versionIdentifiers: model.versionIdentifiers, hashesMatch: differing.isEmpty,
                differingEntities: differing, notes: model.notes, problem: nil,
                entityDetails: model.entities.map(StoreInspection.EntityDetail.init),
                layoutNotes: [])
        } catch {
            self.init(
                entities: 0, versionIdentifiers: [], hashesMatch: false, differingEntities: [], notes: [],
                problem: (error as? LocalizedError)?.errorDescription ?? "\(error)", entityDetails: [], layoutNotes: [])
        }
    }
}

extension StoreInspection {
    /// What is odd about a store, one sentence each, for `inspect` and `export` alike: a `Z_MAX`
    /// below the largest `Z_PK`, a model cache that cannot be decoded or disagrees with the metadata.
    package static func warnings(_ db: Database, model: ModelSummary?) throws -> [String] {
        var warnings: [String] = []
        for (key, table) in try StoreReader.modelTables(db) {
            if let largest = try Int64.fetchOne(db, sql: "SELECT max(\(CoreDataSQL.keyColumn)) FROM \(table)"),
                largest > key.maximumPrimaryKey
            {
                warnings.append(
                    "\(key.name): \(CoreDataSQL.maxColumn) is \(key.maximumPrimaryKey), below its largest \(CoreDataSQL.keyColumn) \(largest); Core Data would hand out a key in use"
                )
            }
        }
        if let model {
            if let problem = model.problem {
                warnings.append("the store's model cache (\(CoreDataSQL.modelCacheTable)) cannot be decoded: \(problem)")
            } else if !model.hashesMatch {
                warnings.append(
                    "the store's model cache disagrees with its metadata: hashes differ for \(model.differingEntities.joined(separator: ", "))"
                )
            }
        }
        return warnings
    }
}

extension StoreInspection.EntityDetail {
    init(_ entity: CompiledEntity) {
        func describe(_ attribute: CompiledAttribute) -> String {
            let type: String
            if attribute.isComposite {
                type = "{" + attribute.elements.map(describe).joined(separator: ", ") + "}"
            } else {
                type = Self.typeNames[attribute.typeCode] ?? "type \(attribute.typeCode)"
            }
            // What enters the hash besides name, type and optionality, in words.
            let marks = [
                attribute.allowsExternalStorage ? "external storage" : nil,
                attribute.preservesValueOnDeletion ? "preserved on deletion" : nil, attribute.isReadOnly ? "read-only" : nil,
                attribute.versionHashModifier.map { "hash modifier \($0)" },
            ].compactMap { $0 }
            return "\(attribute.name): \(type)\(attribute.isOptional ? "?" : "")"
                + (marks.isEmpty ? "" : " (\(marks.joined(separator: ", ")))")
        }
        self.init(
            name: entity.name, superentity: entity.superentity, isAbstract: entity.isAbstract,
            inheritedProperties: entity.inheritedProperties, transientProperties: entity.transientProperties,
            attributes: entity.attributes.map(describe),
            relationships: entity.relationships.map { relationship in
                let destination = relationship.isToMany ? "[\(relationship.destination)]" : relationship.destination
                return "\(relationship.name): \(destination)" + (relationship.inverse.map { " (inverse \($0))" } ?? " (no inverse)")
            },
            uniqueTuples: entity.uniqueTuples, indexes: entity.indexes.map(\.name))
    }

    /// Swift's names for the attribute type codes.
    static let typeNames: [Int: String] = [
        100: "Int16", 200: "Int32", 300: "Int64", 400: "Decimal", 500: "Double", 600: "Float", 700: "String", 800: "Bool", 900: "Date",
        1000: "Data", 1100: "UUID", 1200: "URL", 1800: "Transformable", 2000: "ObjectID", 2100: "Composite",
    ]
}
