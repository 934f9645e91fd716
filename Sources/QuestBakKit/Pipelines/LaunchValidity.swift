import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What Core Data would refuse when the app's new build opens a migrated store: a record that the
/// new model calls invalid fails the migration at launch (Core Data's 134110, wrapping the
/// validation errors 1570 for a missing mandatory value, 1610/1620 for a value out of range, 1580
/// for a missing mandatory to-one, and 133021 for a uniqueness constraint). Each record is
/// checked against the model the migrated store carries:
/// - no NULL in a required attribute that has no default;
/// - no value outside its type's range (Int16, Int32, Float);
/// - no required to-one that is NULL or names no record;
/// - no two records equal in every property of a uniqueness constraint.
/// Each problem names the entity, the `_pk`s and the property. A store written by a schema
/// (TimeQuest's, migrated, carries no model cache) is checked against that schema: its hashes
/// are the store's (the gate's invariants check that), and what no hash covers, whether an
/// attribute has a default, is the schema's own statement.
enum LaunchValidity {
    /// The problems of the store at `store` under `model`: the new model a migration went to
    /// (the store's own cache, or for a store written by a schema, that schema's model).
    static func problems(of store: URL, model: ModelVersion, limit: Int = 20) throws -> [String] {
        let snapshot = try StoreSnapshot(storeAt: store)
        return try snapshot.read { db in
            try problems(db, model: model, layout: try model.layout(db, path: snapshot.path), limit: limit)
        }
    }

    /// The same for a store being written (a migration checks uniqueness before it makes the
    /// unique indexes, so that it can name the records instead of failing on the first).
    /// `model` says what is required, has a default (`ModelVersion.hasDefault`: an array's `[]`
    /// too, which no model holds) or is unique; `layout` says where it is stored.
    static func problems(
        _ db: Database, model: ModelVersion, layout: ModelLayout, uniquenessOnly: Bool = false, limit: Int = 20
    ) throws -> [String] {
        var problems: [String] = []
        for plan in layout.entities {
            problems += try check(plan, model: model, layout: layout, db: db, uniquenessOnly: uniquenessOnly)
            if problems.count >= limit { break }
        }
        return Array(problems.prefix(limit))
    }

    private static func check(
        _ plan: ModelLayout.EntityPlan, model: ModelVersion, layout: ModelLayout,
        db: Database, uniquenessOnly: Bool
    ) throws -> [String] {
        // The entity's own and inherited attributes and relationships, by name, the nearest first.
        let entities = model.compiled.lineage(of: plan.name)
        let attributes = Dictionary(
            entities.flatMap { entity in
                entity.attributes.map {
                    ($0.name, (attribute: $0, hasDefault: model.hasDefault($0, in: entity.name)))
                }
            }, uniquingKeysWith: { first, _ in first })
        let relationships = Dictionary(entities.flatMap(\.relationships).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let key = CoreDataSQL.keyColumn
        let records = "FROM \(plan.table.quotedSQLIdentifier) WHERE \(CoreDataSQL.entityColumn) = \(plan.number)"
        var problems: [String] = []
        func keys(where condition: String) throws -> [Int64] {
            try Int64.fetchAll(db, sql: "SELECT \(key) \(records) AND (\(condition)) ORDER BY \(key) LIMIT 6")
        }
        func say(_ found: [Int64], _ property: String, _ what: String) {
            guard !found.isEmpty else { return }
            let list = found.prefix(5).map(String.init).joined(separator: ", ") + (found.count > 5 ? ", …" : "")
            problems.append("\(plan.name) _pk \(list) \(property): \(what)")
        }
        for field in plan.fields where field.path.count == 1 && !uniquenessOnly {
            let column = field.column.quotedSQLIdentifier
            guard let (attribute, hasDefault) = attributes[field.path[0]] else { continue }
            if !attribute.isOptional && !hasDefault {
                say(try keys(where: "\(column) IS NULL"), field.path[0], "NULL in a required attribute without a default (Core Data 1570)")
            }
            let range: String? =
                switch field.kind {
                case .integer16: "typeof(\(column)) = 'integer' AND \(column) NOT BETWEEN -32768 AND 32767"
                case .integer32: "typeof(\(column)) = 'integer' AND \(column) NOT BETWEEN -2147483648 AND 2147483647"
                case .float: "typeof(\(column)) IN ('integer', 'real') AND abs(\(column)) > 3.4028234663852886e38"
                default: nil
                }
            if let range {
                say(try keys(where: range), field.path[0], "a value outside the range of \(field.kind.rawValue) (Core Data 1610/1620)")
            }
        }
        for toOne in plan.toOne where !uniquenessOnly {
            guard let relationship = relationships[toOne.name], !relationship.isOptional,
                let destination = layout.entity(named: toOne.destination)
            else { continue }
            let column = toOne.column.quotedSQLIdentifier
            say(
                try keys(
                    where:
                        "\(column) IS NULL OR NOT EXISTS (SELECT 1 FROM \(destination.table.quotedSQLIdentifier) AS target WHERE target.\(key) = \(plan.table.quotedSQLIdentifier).\(column))"
                ), toOne.name, "a required to-one that is empty or names no \(toOne.destination) (Core Data 1580)")
        }
        for constraint in entities.flatMap(\.uniqueTuples) {
            let columns = constraint.compactMap { name in
                plan.fields.first { $0.path == [name] }?.column ?? plan.toOne.first { $0.name == name }?.column
            }
            guard columns.count == constraint.count, !columns.isEmpty else { continue }
            let list = columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
            let tables = Set(entities.compactMap { layout.entity(named: $0.name)?.table })
            guard tables.count == 1 else { continue }
            let duplicated = try Int64.fetchAll(
                db,
                sql: """
                    SELECT \(key) \(records) AND (\(list)) IN (
                        SELECT \(list) \(records)
                        AND \(columns.map { "\($0.quotedSQLIdentifier) IS NOT NULL" }.joined(separator: " AND "))
                        GROUP BY \(list) HAVING count(*) > 1)
                    ORDER BY \(key) LIMIT 6
                    """)
            say(duplicated, constraint.joined(separator: ", "), "records equal in a uniqueness constraint (Core Data 133021)")
        }
        return problems
    }
}
