import CoreDataStore
import Foundation
import GRDB
import QuestBakArchive

/// What happens to each table of a store, and to each column of a table that is copied: worked
/// out from the store's own model where it has one that describes it, else from the tables.
struct RedactionPlan {
    enum Treatment: Equatable {
        /// Copied row by row, each column through its rule (nil: as it is).
        case copy
        /// Created, and left without rows.
        case empty
        /// Not created at all (SQLite's statistics, which sample indexed values).
        case dropped
        /// Made by SQLite itself when its virtual table is created, and filled through it.
        case shadow
    }

    struct ColumnPlan {
        var name: String
        var property: String?
        var kind: String
        var rule: RedactionRule?
        var action: String
    }

    struct TablePlan {
        var name: String
        var treatment: Treatment
        var action: String
        var columns: [ColumnPlan]
        var hasRowID: Bool
        var rows: Int
    }

    var describedBy: String
    var tables: [TablePlan]

    static func make(_ db: Database, path: String, keep: [String], scrambleNumbers: Bool) throws -> RedactionPlan {
        let description: StoreDescription
        do {
            description = try StoreDescription.ownDescription(db, path: path)
        } catch {
            description = .tables(reason: (error as? LocalizedError)?.errorDescription ?? "\(error)")
        }
        let entityTables = Dictionary(
            try StoreReader.modelTables(db).map { ($0.entity.name, $0.table) }, uniquingKeysWith: { first, _ in first })
        let shadows = Set(
            try String.fetchAll(db, sql: "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'shadow'").map {
                $0.uppercased()
            })
        let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")

        // By table, then column: the model's fields (sub-entities share their root's table).
        var fields: [String: [String: (property: String, kind: AttributeKind)]] = [:]
        var properties: [String: [Pair]] = [:]
        var describedBy: String
        switch description {
        case .model(let layout):
            describedBy = "its own model (Z_MODELCACHE)"
            for entity in layout.entities {
                for field in entity.fields {
                    let property = entity.name + "." + field.path.joined(separator: ".")
                    // A sub-entity's inherited property is named by either entity in --keep.
                    properties[property.lowercased(), default: []].append(Pair(entity.table, field.column))
                    if fields[entity.table]?[field.column] == nil {
                        fields[entity.table, default: [:]][field.column] = (property, field.kind)
                    }
                }
            }
        case .tables(let reason):
            describedBy = "its tables, every value by its SQLite storage class: \(reason)"
        case .knownVersion:
            describedBy = "its tables"
        }
        let kept = try keptColumns(keep, db: db, fields: fields, properties: properties, entityTables: entityTables)

        var tables: [TablePlan] = []
        for name in names {
            let upper = name.uppercased()
            let columns = try db.columns(in: name)
            let rows = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedSQLIdentifier)") ?? 0
            // The rowid is copied too when no column is it (a table of another tool may rely on it).
            let statement =
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = ?", arguments: [name])?.uppercased() ?? ""
            let hasOwnRowID =
                !statement.hasPrefix("CREATE VIRTUAL") && !statement.contains("WITHOUT ROWID")
                && (try? db.primaryKey(name))?.rowIDColumn == nil
            var plan = TablePlan(name: name, treatment: .copy, action: "", columns: [], hasRowID: hasOwnRowID, rows: rows)
            let isCoreDataTable = Set(columns.map { $0.name.uppercased() }).isSuperset(of: [
                CoreDataSQL.keyColumn, CoreDataSQL.entityColumn,
            ])
            if upper.hasPrefix("SQLITE_STAT") {
                plan.treatment = .dropped
                plan.action = "dropped: SQLite's statistics sample indexed values"
            } else if upper.hasPrefix("SQLITE_") {
                plan.action = "copied as it is: SQLite's own"
            } else if shadows.contains(upper) {
                plan.treatment = .shadow
                plan.action = "filled through its virtual table"
            } else if upper.hasPrefix("Z_") {
                plan.action = "copied as it is: Core Data's own (keys, metadata, model cache, join rows)"
            } else if upper.hasPrefix("ANSCK") && isCoreDataTable {
                plan.treatment = .empty
                plan.action = "emptied: CloudKit mirroring, whose records carry the iCloud user's identity"
            } else if upper.hasPrefix("A") && name == upper && isCoreDataTable {
                plan.treatment = .empty
                plan.action = "emptied: persistent history, whose tombstones keep deleted values"
            } else if let byColumn = fields[name] {
                plan.action = "redacted by the model"
                for column in columns {
                    let upperColumn = column.name.uppercased()
                    guard let field = byColumn[column.name] ?? byColumn[upperColumn] else {
                        plan.columns.append(ColumnPlan(name: column.name, kind: column.type, rule: nil, action: "kept: a key or a link"))
                        continue
                    }
                    var columnPlan = ColumnPlan(
                        name: column.name, property: field.property, kind: field.kind.rawValue, rule: nil, action: "")
                    if kept.contains(Pair(name, column.name)) {
                        columnPlan.action = "kept as asked"
                    } else {
                        (columnPlan.rule, columnPlan.action) = rule(for: field.kind, scrambleNumbers: scrambleNumbers)
                    }
                    plan.columns.append(columnPlan)
                }
            } else {
                plan.action =
                    isCoreDataTable && entityTables.values.contains(name)
                    ? "redacted by storage class (no model describes it)" : "redacted by storage class (another tool's table)"
                for column in columns {
                    let type = column.type.uppercased()
                    var columnPlan = ColumnPlan(name: column.name, kind: column.type, rule: nil, action: "")
                    if kept.contains(Pair(name, column.name)) {
                        columnPlan.action = "kept as asked"
                    } else if isCoreDataTable && CoreDataSQL.rowColumns.contains(column.name.uppercased()) {
                        columnPlan.action = "kept: a key"
                    } else {
                        let isDate = type.contains("TIMESTAMP") || type.contains("DATE")
                        columnPlan.rule = isDate ? .storageClassDate : .storageClass
                        columnPlan.action =
                            "text, UUIDs and bytes replaced"
                            + (isDate
                                ? ", numbers shifted as dates"
                                : scrambleNumbers ? ", reals scaled, integers kept (they may be keys)" : ", numbers kept")
                    }
                    plan.columns.append(columnPlan)
                }
            }
            if plan.treatment == .copy && plan.columns.isEmpty {
                plan.columns = columns.map {
                    ColumnPlan(name: $0.name, kind: $0.type, rule: nil, action: "kept: Core Data's or SQLite's own")
                }
            }
            tables.append(plan)
        }
        return RedactionPlan(describedBy: describedBy, tables: tables)
    }

    static func rule(for kind: AttributeKind, scrambleNumbers: Bool) -> (RedactionRule?, String) {
        switch kind {
        case .string, .uri: return (.text, "replaced: text of the same length and shape, UUIDs by UUIDs")
        case .uuid: return (.uuid, "replaced: another UUID")
        case .date: return (.date, "shifted by the store's one offset")
        case .binary: return (.binary, "replaced: bytes of the same length (external-storage files renamed and rewritten)")
        case .transformable, .stringArray:
            return (.binary, "replaced: strings and data inside the archive, numbers and structure kept")
        case .integerArray: return (nil, "kept: numbers")
        case .integer16: return scrambleNumbers ? (.integer16, "scrambled: same digits") : (nil, "kept: a number")
        case .integer32: return scrambleNumbers ? (.integer32, "scrambled: same digits") : (nil, "kept: a number")
        case .integer: return scrambleNumbers ? (.integer64, "scrambled: same digits") : (nil, "kept: a number")
        case .double, .float, .decimal: return scrambleNumbers ? (.real, "scaled by the store's one factor") : (nil, "kept: a number")
        case .boolean: return (nil, "kept: a boolean")
        case .composite, .objectID: return (.storageClass, "replaced by storage class")
        }
    }

    struct Pair: Hashable {
        var table: String
        var column: String
        init(_ table: String, _ column: String) {
            self.table = table
            self.column = column.uppercased()
        }
    }

    /// The columns `keep` names (`Entity.property`; for a store without a model also
    /// `Entity.ZCOLUMN` or `TABLE.COLUMN`), refused when one names nothing.
    static func keptColumns(
        _ keep: [String], db: Database, fields: [String: [String: (property: String, kind: AttributeKind)]], properties: [String: [Pair]],
        entityTables: [String: String]
    ) throws -> Set<Pair> {
        let byProperty = properties
        var result: Set<Pair> = []
        for name in keep {
            if let pairs = byProperty[name.lowercased()] {
                result.formUnion(pairs)
                continue
            }
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2, fields.isEmpty || !fields.keys.contains(entityTables[parts[0]] ?? parts[0]) {
                let table = entityTables[parts[0]] ?? parts[0]
                if try db.tableExists(table) {
                    let columns = try db.columns(in: table).map { $0.name.uppercased() }
                    if let column = [parts[1].uppercased(), "Z" + parts[1].uppercased()].first(where: columns.contains) {
                        result.insert(Pair(table, column))
                        continue
                    }
                }
            }
            let known =
                fields.isEmpty
                ? entityTables.keys.sorted().map { $0 + ".PROPERTY" } : fields.values.flatMap { $0.values.map(\.property) }.sorted()
            throw RedactionError.unknownProperty(name, known: known)
        }
        return result
    }
}
