import CoreDataStore
import Foundation
import GRDB

/// A store written from a questbak schema's records in the exact Core Data layout (spec: "The
/// file", "Bookkeeping tables", "Entity tables"): what the fixture generator and the benchmarks
/// make stores with. Tooling only: the library restores every archive through its statements.
extension StoreWriter {
    /// What a write made: records by entity.
    public struct Summary: Sendable, Equatable {
        /// Records written, by entity name.
        public var counts: [String: Int]
        /// `Z_MAX` written, by entity name.
        public var maximumPrimaryKeys: [String: Int64]
    }

    /// Receives records while the store is being written.
    package final class Sink {
        let db: Database
        let schema: Schema
        package fileprivate(set) var counts: [String: Int] = [:]
        package fileprivate(set) var maximumPrimaryKeys: [String: Int64] = [:]
        /// The schema's tables (`ModelTables`, the one layout), made on the first insert.
        private var tables: ModelTables?
        /// By entity: the insert and the properties its columns hold after `Z_PK, Z_ENT, Z_OPT`.
        private var statements: [String: (statement: Statement, properties: [String], number: Int)] = [:]

        package init(db: Database, schema: Schema) {
            self.db = db
            self.schema = schema
        }

        /// The database the records go into, inside the write's transaction.
        public var database: Database { db }

        /// The `Z_ENT` of each entity's records. `Z_PRIMARYKEY` is written only once the records are
        /// in (its `Z_MAX` needs them), so what reads the store's layout inside `fill` takes them here.
        package var entityNumbers: [String: Int64] {
            Dictionary(
                uniqueKeysWithValues: schema.entities.compactMap { entity in
                    schema.entityNumber(of: entity.name).map { (entity.name, Int64($0)) }
                })
        }

        /// Inserts one record of `entityName`, with its `Z_OPT` as the record has it.
        public func insert(_ record: EntityRecord, into entityName: String) throws {
            let (statement, properties, number) = try prepared(for: entityName)
            let opt: StoredValue = record.opt.map { .integer($0) } ?? .null
            var arguments: [StoredValue] = [.integer(record.primaryKey), .integer(Int64(number)), opt]
            arguments += properties.map { ValueCoding.encode(record[$0]) }
            try ExactSQL.execute(statement, arguments)
            FaultPoint.reached("inserted \(entityName) \(record.primaryKey)")
            counts[entityName, default: 0] += 1
            maximumPrimaryKeys[entityName] = max(maximumPrimaryKeys[entityName] ?? 0, record.primaryKey)
        }

        private func prepared(for entityName: String) throws -> (statement: Statement, properties: [String], number: Int) {
            if let cached = statements[entityName] { return cached }
            let tables = try self.tables ?? ModelTables(model: CompiledModel(schema: schema))
            self.tables = tables
            guard schema.entity(named: entityName) != nil, let number = tables.number(of: entityName),
                let table = tables.table(for: entityName)
            else {
                throw StoreError.schemaMismatch(
                    path: "", versionIdentifier: schema.versionIdentifier, differences: ["unknown entity \(entityName)"])
            }
            let columns = tables.propertyColumns(of: entityName)
            let names = CoreDataSQL.rowColumns + columns.map(\.column.name)
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            let statement = try db.makeStatement(
                sql: "INSERT INTO \(table.name) (\(names.joined(separator: ", "))) VALUES (\(placeholders))")
            statements[entityName] = (statement, columns.map(\.property), number)
            return (statement, columns.map(\.property), number)
        }
    }

    /// What the bookkeeping tables get once the records are in: decided after `fill`, because an
    /// import learns the source metadata only from the end of its archive.
    package struct Bookkeeping {
        public var metadata: StoreMetadata
        public var modelCache: Data?
        /// `Z_MAX` floors (a source store's `Z_MAX`, which deleted rows leave above the largest key).
        public var maximumPrimaryKeyFloor: [String: Int64]

        public init(metadata: StoreMetadata, modelCache: Data? = nil, maximumPrimaryKeyFloor: [String: Int64] = [:]) {
            self.metadata = metadata
            self.modelCache = modelCache
            self.maximumPrimaryKeyFloor = maximumPrimaryKeyFloor
        }
    }

    /// Writes a new store at `url`, which must not exist or be an empty file. `fill` inserts the
    /// records through the sink (and may run further SQL on `sink.db` in the same transaction)
    /// and returns the bookkeeping. Counts are taken after `fill`, `Z_MAX` is the highest key
    /// inserted or the floor. On failure nothing is left at `url`.
    @discardableResult
    package static func write(to url: URL, schema: Schema, fill: (Sink) throws -> Bookkeeping) throws -> Summary {
        var summary = Summary(counts: [:], maximumPrimaryKeys: [:])
        try writeDatabase(to: url, settings: .coreData) { db in
            let tables = try ModelTables(model: CompiledModel(schema: schema))
            try createTables(db, tables: tables)
            let sink = Sink(db: db, schema: schema)
            let bookkeeping = try fill(sink)
            for entity in schema.entities {
                guard let table = tables.table(for: entity.name) else { continue }
                summary.counts[entity.name] = try StoreReader.rowCount(db, table: table.name)
                summary.maximumPrimaryKeys[entity.name] = max(
                    sink.maximumPrimaryKeys[entity.name] ?? 0, bookkeeping.maximumPrimaryKeyFloor[entity.name] ?? 0)
            }
            try writeBookkeeping(db, schema: schema, bookkeeping: bookkeeping, summary: summary)
        }
        return summary
    }

    /// Every entity table, then their indexes. A schema's records carry no to-many links, so no
    /// join table is made.
    fileprivate static func createTables(_ db: Database, tables: ModelTables) throws {
        for table in tables.tables { try db.execute(sql: table.createStatement) }
        for table in tables.tables {
            for sql in table.indexStatements { try db.execute(sql: sql) }
        }
        for sql in CoreDataSQL.bookkeeping + CoreDataSQL.history { try db.execute(sql: sql) }
    }

    fileprivate static func writeBookkeeping(_ db: Database, schema: Schema, bookkeeping: Bookkeeping, summary: Summary) throws {
        for (index, entity) in schema.entities.enumerated() {
            try CoreDataSQL.insertEntityKey(
                db, number: Int64(index + 1), name: entity.name, maximumPrimaryKey: summary.maximumPrimaryKeys[entity.name] ?? 0)
        }
        // Core Data registers its history entities with the first save that stores anything.
        if summary.counts.values.contains(where: { $0 > 0 }) {
            for (number, name) in CoreDataSQL.historyEntities {
                try CoreDataSQL.insertEntityKey(db, number: number, name: name, maximumPrimaryKey: 0)
            }
        }
        try CoreDataSQL.insertMetadata(db, uuid: bookkeeping.metadata.uuid, plist: bookkeeping.metadata.encodedPlist)
        if let modelCache = bookkeeping.modelCache { try CoreDataSQL.insertModelCache(db, modelCache) }
    }
}
