import CoreDataStore
import Foundation
import GRDB

extension StoreReader {
    /// Every record of `entity` in the store, in `Z_PK` order, read by the one row reader as
    /// `version` lays the store out (a typed array as its elements); none for an entity the
    /// version does not have. Rows are not checked: a test reads what a repair left, orphans too.
    package static func records(_ db: Database, version: ModelVersion, entity: String, path: String) throws -> [EntityRecord] {
        guard let plan = try version.layout(db, path: path, checkRows: false).entity(named: entity) else { return [] }
        var records: [EntityRecord] = []
        try forEachRecord(db, plan: plan, path: path) { records.append($0) }
        return records
    }
}

/// Runs `statements` on the store's `sqlite_master` with `writable_schema` on: how a test gives
/// a table a declaration SQLite would not let it alter (a collation, a column without a type, a
/// virtual table of a missing module), its rows left as they are.
public func editSchema(of store: URL, _ statements: String) throws {
    let queue = try DatabaseQueue(path: store.path)
    try queue.writeWithoutTransaction { db in
        try db.execute(sql: "PRAGMA writable_schema = ON")
        try db.execute(sql: statements)
        try db.execute(sql: "PRAGMA writable_schema = OFF")
    }
    try queue.close()
}
